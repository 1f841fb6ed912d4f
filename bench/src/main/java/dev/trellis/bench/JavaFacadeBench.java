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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Graphs built in Java with {@code JavaGraph} ({@code node}s, which run inline) and run through the facade; compare
 * with the Kotlin rows of the same run: {@code ChainBench.trellisInvoke} and {@code OneNodeBench.trellisInvoke}
 * ({@code runBlocking { graph.invoke(input) }}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class JavaFacadeBench {
    private TrellisRunner chain;
    private TrellisRunner oneNode;
    private State input;

    @Setup
    public void setUp() throws Exception {
        chain = Trellis.runner(JavaWorkloads.chain(TrellisWorkloads.CHAIN));
        oneNode = Trellis.runner(JavaWorkloads.oneNode());
        input = TrellisWorkloads.INSTANCE.input();

        Check.equal("java chain n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(chain.invoke(input)));
        Check.equal("java chain async n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(chain.invokeAsync(input).join()));
        Check.equal("java one-node n", 1, TrellisWorkloads.counter(oneNode.invoke(input)));
        Check.equal("java one-node async n", 1, TrellisWorkloads.counter(oneNode.invokeAsync(input).join()));
    }

    /** Java chain of 100: blocking {@code TrellisRunner.invoke(State)}, on the benchmark thread. */
    @Benchmark
    public RunResult javaChainInvoke() throws InterruptedException {
        return chain.invoke(input);
    }

    /**
     * Java chain of 100: {@code TrellisRunner.invokeAsync(State).join()}. The run starts on the calling thread, so a
     * chain of inline nodes has ended when {@code invokeAsync} returns: no hand-off to the pool, no wake-up.
     */
    @Benchmark
    public RunResult javaChainInvokeAsync() {
        return chain.invokeAsync(input).join();
    }

    /** Java 1-node graph: {@code TrellisRunner.invokeAsync(State).join()}; compare with {@code OneNodeBench.trellisInvoke}. */
    @Benchmark
    public RunResult javaOneNodeInvokeAsync() {
        return oneNode.invokeAsync(input).join();
    }

    /** Java 1-node graph: blocking {@code TrellisRunner.invoke(State)}. */
    @Benchmark
    public RunResult javaOneNodeInvoke() throws InterruptedException {
        return oneNode.invoke(input);
    }
}
