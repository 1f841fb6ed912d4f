package dev.trellis.bench;

import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Setup;

/** Workload 5: a chain of 100 nodes, each appending a distinct 400-byte string to a list (state grows to 40 KB). */
public class StateGrowthBench extends WorkloadBench {
    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.stateGrowth(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.stateGrowth(TrellisWorkloads.CHAIN);

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis log", TrellisWorkloads.CHAIN, TrellisWorkloads.log(result).size());
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j log", TrellisWorkloads.CHAIN, state.log().size());
    }
}
