package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.RunResult;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Workload 6: the Java facade on the chain of 100 nodes, {@code Trellis.runner(graph).invokeAsync(input).join()}.
 * The run starts on {@code Dispatchers.Default} and the benchmark thread blocks in {@code join()}, so the figure
 * includes one hand-off to a pool thread and one wake-up; compare with {@code ChainBench.trellisInvoke}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class FacadeBench {
    private TrellisRunner runner;
    private State input;

    @Setup
    public void setUp() {
        Graph graph = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        runner = Trellis.runner(graph);
        input = TrellisWorkloads.INSTANCE.input();

        RunResult result = runner.invokeAsync(input).join();
        Check.equal("facade n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(result));
    }

    /** Java facade: {@code TrellisRunner.invokeAsync(State).join()}. */
    @Benchmark
    public RunResult facadeInvokeAsync() {
        return runner.invokeAsync(input).join();
    }
}
