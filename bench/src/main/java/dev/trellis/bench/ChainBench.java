package dev.trellis.bench;

import ai.koog.agents.core.agent.GraphAIAgent;
import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/** Workload 2: a chain of 100 nodes, each incrementing a counter. */
public class ChainBench extends WorkloadBench {
    private GraphAIAgent<Integer, Integer> koog;

    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.chain(TrellisWorkloads.CHAIN);

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(result));
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j n", TrellisWorkloads.CHAIN, state.n());
        agentic = AgenticWorkloads.chain(TrellisWorkloads.CHAIN);
        koog = KoogWorkloads.chain(TrellisWorkloads.CHAIN);
        Check.equal("agentic n", TrellisWorkloads.CHAIN, AgenticWorkloads.invoke(agentic));
        Check.equal("koog n", TrellisWorkloads.CHAIN, KoogWorkloads.run(koog, 0));
    }

    /** Koog: `GraphAIAgent.run(0)` inside runBlocking (see KoogWorkloads). */
    @Benchmark
    public Integer koogRun() {
        return KoogWorkloads.run(koog, 0);
    }
}
