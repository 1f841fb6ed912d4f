package dev.trellis.bench;

import ai.koog.agents.core.agent.GraphAIAgent;
import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/** Workload 1: a one-node graph, whole invocation. */
public class OneNodeBench extends WorkloadBench {
    private GraphAIAgent<Integer, Integer> koog;

    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.oneNode();
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.oneNode();

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis n", 1, TrellisWorkloads.counter(result));
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j n", 1, state.n());
        agentic = AgenticWorkloads.oneNode();
        koog = KoogWorkloads.oneNode();
        Check.equal("agentic n", 1, AgenticWorkloads.invoke(agentic));
        Check.equal("koog n", 1, KoogWorkloads.run(koog, 0));
    }

    /** Koog: `GraphAIAgent.run(0)` inside runBlocking (see KoogWorkloads). */
    @Benchmark
    public Integer koogRun() {
        return KoogWorkloads.run(koog, 0);
    }
}
