package dev.trellis.bench;

import ai.koog.agents.core.agent.GraphAIAgent;
import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/** Workload 4: a loop of 1,000 iterations through a conditional back edge (a route). */
public class LoopBench extends WorkloadBench {
    private GraphAIAgent<Integer, Integer> koog;

    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.loop(TrellisWorkloads.LOOP);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.loop(TrellisWorkloads.LOOP);

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis n", TrellisWorkloads.LOOP, TrellisWorkloads.counter(result));
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j n", TrellisWorkloads.LOOP, state.n());
        agentic = AgenticWorkloads.loop(TrellisWorkloads.LOOP);
        koog = KoogWorkloads.loop(TrellisWorkloads.LOOP);
        Check.equal("agentic n", TrellisWorkloads.LOOP, AgenticWorkloads.invoke(agentic));
        Check.equal("koog n", TrellisWorkloads.LOOP, KoogWorkloads.run(koog, 0));
    }

    /** Koog: `GraphAIAgent.run(0)` inside runBlocking (see KoogWorkloads). */
    @Benchmark
    public Integer koogRun() {
        return KoogWorkloads.run(koog, 0);
    }
}
