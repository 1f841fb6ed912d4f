package dev.trellis.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The fixed cost every Trellis figure includes: an empty {@code runBlocking}. Subtract it to get the run's own
 * cost (a coroutine caller pays no runBlocking).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
public class BaselineBench {
    /** {@code runBlocking { 1 }}. */
    @Benchmark
    public int emptyRunBlocking() {
        return TrellisWorkloads.emptyRunBlocking();
    }

    /**
     * The floor of any coroutine fan-out of the fan-out workload's width: {@code runBlocking} launching 64 empty
     * coroutines on {@code Dispatchers.Default} and waiting for them (no graph, no state).
     */
    @Benchmark
    public int launch64Empty() {
        return TrellisWorkloads.launchEmpty(TrellisWorkloads.FAN_OUT);
    }

    /**
     * The same 64 empty coroutines launched on {@code runBlocking}'s own thread: the floor issue 36's fan-out target is
     * set against (the fan-out's branches that do not suspend run where the run is driven).
     */
    @Benchmark
    public int launch64OneThread() {
        return TrellisWorkloads.launchEmptyOnOneThread(TrellisWorkloads.FAN_OUT);
    }
}
