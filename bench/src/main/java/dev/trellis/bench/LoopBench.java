package dev.trellis.bench;

import dev.trellis.runtime.RunResult;
import org.openjdk.jmh.annotations.Setup;

/** Workload 4: a loop of 1,000 iterations through a conditional back edge (a route). */
public class LoopBench extends WorkloadBench {
    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.loop(TrellisWorkloads.LOOP);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.loop(TrellisWorkloads.LOOP);

        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis n", TrellisWorkloads.LOOP, TrellisWorkloads.counter(result));
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j n", TrellisWorkloads.LOOP, state.n());
    }
}
