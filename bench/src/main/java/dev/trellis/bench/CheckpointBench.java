package dev.trellis.bench;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunOptions;
import dev.trellis.runtime.RunResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Checkpointing cost: the chain with {@code Checkpointing(store)} in the default {@code EVERY_STEP} mode,
 * one checkpoint per node step. Every invocation uses a fresh run id (a run id may be used once per store).
 *
 * <ul>
 *   <li>{@code chainInMemory}: chain of 100, {@code InMemoryCheckpointStore}; compare with {@code ChainBench.trellisInvoke}.
 *       The run is deleted from the store after each invocation ({@code store.delete(runId)}, one map removal per run,
 *       included in the figure), otherwise the store keeps every checkpoint and fills the heap.</li>
 *   <li>{@code chain20Sqlite}: chain of {@value #SQLITE_CHAIN}, {@code SqliteCheckpointStore} on a temporary file
 *       (rows are kept; the file grows by a few MB per run of the benchmark); compare with {@code chain20Plain}.</li>
 * </ul>
 *
 * The setup also prints the checkpoint payload size per step, for the chain and for the state-growth workload.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class CheckpointBench {
    /** Length of the chain measured with SQLite (a write per step makes the 100-node chain slow to iterate). */
    public static final int SQLITE_CHAIN = 20;

    private Graph chain;
    private Graph chain20;
    private State input;
    private InMemoryCheckpointStore memStore;
    private Checkpointing memCheckpointing;
    private Path dir;
    private SqliteCheckpointStore sqliteStore;
    private Checkpointing sqliteCheckpointing;
    private long counter;

    @Setup
    public void setUp() throws IOException {
        chain = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        chain20 = TrellisWorkloads.INSTANCE.chain(SQLITE_CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        memStore = new InMemoryCheckpointStore();
        memCheckpointing = new Checkpointing(memStore);
        dir = Files.createTempDirectory("trellis-bench-");
        sqliteStore = new SqliteCheckpointStore(dir.resolve("checkpoints.db"));
        sqliteCheckpointing = new Checkpointing(sqliteStore);

        RunResult mem = TrellisWorkloads.invoke(chain, input, options(memCheckpointing));
        Check.equal("in-memory n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(mem));
        report("chain of " + TrellisWorkloads.CHAIN + ", in-memory", mem.getRunId(), TrellisWorkloads.CHAIN);
        RunResult sqlite = TrellisWorkloads.invoke(chain20, input, options(sqliteCheckpointing));
        Check.equal("sqlite n", SQLITE_CHAIN, TrellisWorkloads.counter(sqlite));
        long[] sqliteRecords = TrellisWorkloads.checkpointPayloads(sqliteStore, sqlite.getRunId());
        Check.equal("sqlite checkpoints", true, sqliteRecords[0] >= SQLITE_CHAIN);

        Graph growth = TrellisWorkloads.INSTANCE.stateGrowth(TrellisWorkloads.CHAIN);
        RunResult grown = TrellisWorkloads.invoke(growth, input, options(memCheckpointing));
        Check.equal("growth log", TrellisWorkloads.CHAIN, TrellisWorkloads.log(grown).size());
        report("state growth (" + TrellisWorkloads.CHAIN + " x " + TrellisWorkloads.PAYLOAD + " B), in-memory",
                grown.getRunId(), TrellisWorkloads.CHAIN);
    }

    private void report(String what, String runId, int steps) {
        long[] records = TrellisWorkloads.checkpointPayloads(memStore, runId);
        System.out.printf("%n[checkpoint payload] %s: %d checkpoints, %d chars in all, %.1f chars per step%n",
                what, records[0], records[1], (double) records[1] / steps);
        Check.equal("checkpoints of " + what, true, records[0] >= steps);
        System.out.printf("[checkpoint payload] %s, checkpoint 50: %s%n",
                what, TrellisWorkloads.checkpointPayload(memStore, runId, 50));
    }

    private RunOptions options(Checkpointing checkpointing) {
        return TrellisWorkloads.options("r" + counter++, checkpointing);
    }

    @TearDown
    public void tearDown() throws IOException {
        sqliteStore.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** Chain of 100, checkpoint after every step into an {@code InMemoryCheckpointStore}; then the run is deleted. */
    @Benchmark
    public RunResult chainInMemory() {
        return TrellisWorkloads.invokeThenDelete(chain, input, options(memCheckpointing), memStore);
    }

    /** Chain of 20, checkpoint after every step into a {@code SqliteCheckpointStore} on a temporary file. */
    @Benchmark
    public RunResult chain20Sqlite() {
        return TrellisWorkloads.invoke(chain20, input, options(sqliteCheckpointing));
    }

    /** Chain of 20 without checkpointing: the reference of {@code chain20Sqlite}. */
    @Benchmark
    public RunResult chain20Plain() {
        return TrellisWorkloads.invoke(chain20, input);
    }
}
