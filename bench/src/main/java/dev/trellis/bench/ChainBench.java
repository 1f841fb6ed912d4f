package dev.trellis.bench;

import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Setup;

/** Workload 2: a chain of 100 nodes, each incrementing a counter. */
public class ChainBench extends WorkloadBench {
    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.chain(TrellisWorkloads.CHAIN);

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(result));
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j n", TrellisWorkloads.CHAIN, state.n());
    }
}
