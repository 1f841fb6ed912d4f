package dev.trellis.bench;

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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code width} parallel Java {@code blockingNode}s, each calling {@code Thread.sleep(100)}, between an entry and a
 * join, run with the blocking {@code invoke}: the wall time of a run. With every sleeper on a thread of its own the
 * run takes a little over 100 ms whatever the number of cores; a pool of one thread per core would take
 * {@code width / cores} × 100 ms.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class JavaSleepBench {
    /** How long each node sleeps, in milliseconds. */
    public static final long SLEEP_MILLIS = 100;

    @Param({"64", "200"})
    public int width;

    private TrellisRunner runner;
    private State input;

    @Setup
    public void setUp() throws Exception {
        runner = Trellis.runner(JavaWorkloads.sleepers(width, SLEEP_MILLIS));
        input = TrellisWorkloads.INSTANCE.input();
        Check.equal("sleepers logged", width, TrellisWorkloads.log(runner.invoke(input)).size());
    }

    /** One run: {@code width} sleeps of 100 ms in parallel. */
    @Benchmark
    public RunResult sleepers() throws InterruptedException {
        return runner.invoke(input);
    }
}
