package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
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
 * A map node of 64 tasks that each {@code delay(100 ms)}, with maxConcurrency 64: the wall time of one run, single
 * shots. With every task waiting at the same time a run takes a little over 100 ms (target: under 150 ms).
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5)
@Measurement(iterations = 20)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class SleepingMapBench {
    private Graph graph;
    private State input;

    @Setup
    public void setUp() {
        graph = CompositionWorkloads.INSTANCE.sleepingMap();
        input = CompositionWorkloads.mapInput(CompositionWorkloads.SLEEP_TASKS);
        int sum = CompositionWorkloads.SLEEP_TASKS * (CompositionWorkloads.SLEEP_TASKS - 1) / 2;
        Check.equal("sleeping map total", sum, CompositionWorkloads.total(TrellisWorkloads.invoke(graph, input)));
    }

    /** One run: 64 tasks each waiting 100 ms, at once. */
    @Benchmark
    public RunResult sleepingMap() {
        return TrellisWorkloads.invoke(graph, input);
    }
}
