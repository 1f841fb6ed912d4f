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
 * Workload 6: the Java facade on the (Kotlin-built) chain of 100 nodes. {@code invokeAsync(input).join()} starts the
 * run on {@code Dispatchers.Default} while the benchmark thread blocks in {@code join()}, so the figure includes one
 * hand-off to a pool thread and one wake-up; the blocking {@code invoke(input)} runs on the benchmark thread itself.
 * Compare with {@code ChainBench.trellisInvoke}.
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

    /** Java facade: the blocking {@code TrellisRunner.invoke(State)}, which runs on the benchmark thread (no hand-off). */
    @Benchmark
    public RunResult facadeInvoke() throws InterruptedException {
        return runner.invoke(input);
    }
}
