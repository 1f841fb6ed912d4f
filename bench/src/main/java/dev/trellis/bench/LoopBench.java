package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.RunResult;
import java.util.concurrent.TimeUnit;
import org.bsc.langgraph4j.CompiledGraph;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/** Workload 4: a loop of 1,000 iterations through a conditional back edge (a route). */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class LoopBench {
    private Graph trellis;
    private State input;
    private CompiledGraph<LangGraph4jWorkloads.BenchAgentState> lg4j;

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

    /** Trellis `Graph.invoke` (inside runBlocking). */
    @Benchmark
    public RunResult trellisInvoke() {
        return TrellisWorkloads.invoke(trellis, input);
    }

    /** Trellis `Graph.run` collecting every event (inside runBlocking). */
    @Benchmark
    public int trellisRunEvents() {
        return TrellisWorkloads.runCollect(trellis, input);
    }

    /** LangGraph4j `CompiledGraph.invoke(Map)`. */
    @Benchmark
    public LangGraph4jWorkloads.BenchAgentState lg4jInvoke() {
        return LangGraph4jWorkloads.invoke(lg4j);
    }
}
