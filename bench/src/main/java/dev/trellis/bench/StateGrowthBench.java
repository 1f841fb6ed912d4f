package dev.trellis.bench;

import ai.koog.agents.core.agent.GraphAIAgent;
import dev.trellis.runtime.RunResult;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/** Workload 5: a chain of 100 nodes, each appending a distinct 400-byte string to a list (state grows to 40 KB). */
public class StateGrowthBench extends WorkloadBench {
    private GraphAIAgent<List<String>, List<String>> koog;

    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.stateGrowth(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.stateGrowth(TrellisWorkloads.CHAIN);

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis log", TrellisWorkloads.CHAIN, TrellisWorkloads.log(result).size());
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j log", TrellisWorkloads.CHAIN, state.log().size());
        agentic = AgenticWorkloads.stateGrowth(TrellisWorkloads.CHAIN);
        koog = KoogWorkloads.stateGrowth(TrellisWorkloads.CHAIN);
        List<?> agenticLog = (List<?>) AgenticWorkloads.invoke(agentic);
        Check.equal("agentic log", TrellisWorkloads.CHAIN, agenticLog.size());
        Check.equal("agentic log[99]", TrellisWorkloads.payload(99), agenticLog.get(99));
        List<String> koogLog = KoogWorkloads.run(koog, KoogWorkloads.growthInput());
        Check.equal("koog log", TrellisWorkloads.CHAIN, koogLog.size());
        Check.equal("koog log[99]", TrellisWorkloads.payload(99), koogLog.get(99));
    }

    /** Koog: `GraphAIAgent.run(new list)` inside runBlocking (see KoogWorkloads). */
    @Benchmark
    public List<String> koogRun() {
        return KoogWorkloads.run(koog, KoogWorkloads.growthInput());
    }
}
