package dev.trellis.bench;

import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Setup;

/** Workload 1: a one-node graph, whole invocation. */
public class OneNodeBench extends WorkloadBench {
    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.oneNode();
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.oneNode();

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis n", 1, TrellisWorkloads.counter(result));
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j n", 1, state.n());
    }
}
