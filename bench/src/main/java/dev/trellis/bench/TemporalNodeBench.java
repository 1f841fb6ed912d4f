package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.Status;
import dev.trellis.temporal.TemporalRunResult;
import dev.trellis.temporal.TemporalRunner;
import dev.trellis.temporal.TemporalWorkers;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The per-node overhead of running a graph on Temporal ({@code trellis-temporal}, docs/scale-out.md): a chain of
 * {@link #nodes} nodes, each incrementing a counter, run to its end as a workflow on Temporal's in-process test server
 * (one worker, the same JVM), one run per invocation. Each node is one activity: (time(10) − time(1)) / 9 is the
 * cost of a node on Temporal (its activity task, the workflow task that records its completion and the history
 * events), the rest the cost of starting and ending a workflow. Compare with {@link ChainBench} for the local runtime.
 *
 * <p>The test server runs in real time, without time skipping: nothing here waits on a timer, and with time skipping
 * a blocking {@code getResult} lets the server jump to its next timer whenever no task holds its clock — the ten-year
 * run timeouts of the runs before, which it does not cancel when a run completes — so its clock runs about ten years
 * ahead per few runs. Some 290 years ahead, the SDK's end-to-end latency metric (wall clock minus the run's start in
 * server time) overflows and fails every workflow task that completes a run: the run never ends, the benchmark hangs
 * in {@code getResult} (a plain one-activity Temporal workflow does the same after about 60 runs).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 5)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class TemporalNodeBench {
    private static final String QUEUE = "bench";

    /** How many nodes the chain has. */
    @Param({"1", "10"})
    public int nodes;

    private final StateSchema schema = new StateSchema("temporal-bench");
    private final StateKey<Integer> n = Keys.of(schema, "n", Integer.class, 0);
    private TestWorkflowEnvironment env;
    private TemporalRunner runner;
    private Graph graph;
    private long runs;

    @Setup(Level.Trial)
    public void start() {
        JavaGraph.Builder builder = JavaGraph.builder("chain-" + nodes, schema);
        for (int i = 0; i < nodes; i++) {
            builder.node("n" + i, ctx -> ctx.set(n, ctx.get(n) + 1));
            if (i > 0) builder.edge("n" + (i - 1), "n" + i);
        }
        graph = builder.start("n0").build();
        env = TestWorkflowEnvironment.newInstance(
                TestEnvironmentOptions.newBuilder().setUseTimeskipping(false).build());
        TemporalWorkers.register(env.newWorker(QUEUE), List.of(graph));
        env.start();
        runner = new TemporalRunner(env.getWorkflowClient(), QUEUE);
        TemporalRunResult result = run();
        Check.equal("status", Status.COMPLETED, result.getStatus());
        Check.equal("n", nodes, result.getState().get(n));
    }

    @TearDown(Level.Trial)
    public void stop() {
        env.close();
    }

    private TemporalRunResult run() {
        return runner.start(graph, schema.initialState(), "bench-" + nodes + "-" + runs++).awaitBlocking();
    }

    /** One run of the chain, start to result. */
    @Benchmark
    public TemporalRunResult chain() {
        return run();
    }
}
