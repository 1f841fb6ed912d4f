package dev.trellis.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunOptions;
import dev.trellis.runtime.RunResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
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
 * Checkpointing on PostgreSQL: one run at a time of the chain of 100, checkpointing every step into a
 * {@code PostgresCheckpointStore} (over a pool of two connections) with {@code Durability.SYNC} (every append committed
 * before the next node) and {@code ASYNC} (appends written behind the run), beside the same chain without
 * checkpoints. (checkpointed − plain) / 100 is what a checkpoint adds per step.
 *
 * <p>Needs a PostgreSQL server: {@code TRELLIS_BENCH_POSTGRES_URL} (a JDBC URL; by default
 * {@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres}). Each fork writes into a schema of its own, dropped at
 * the end. The server's commit cost bounds the SYNC figure from below: compare with {@code pg_test_fsync} on the
 * server's disk, and with {@link #jdbcInsertOnly}, the least a durable write per step costs from this JVM.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class PostgresCheckpointBench {
    /** The environment variable naming the server's JDBC URL. */
    public static final String URL_VARIABLE = "TRELLIS_BENCH_POSTGRES_URL";

    private Graph chain;
    private State input;
    private HikariDataSource pool;
    private String schema;
    private Checkpointing sync;
    private Checkpointing async;
    private PostgresCheckpointStore store;
    private String payload;
    private long counter;

    @Setup
    public void setUp() {
        String url = System.getenv(URL_VARIABLE);
        if (url == null) url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(2);
        config.setPoolName("trellis-bench");
        try {
            pool = new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new IllegalStateException("PostgresCheckpointBench needs a PostgreSQL server at " + url
                    + " (set " + URL_VARIABLE + " to its JDBC URL, or leave the benchmark out with -e Postgres)", e);
        }
        schema = "trellis_bench_" + ProcessHandle.current().pid();
        store = new PostgresCheckpointStore(pool, schema);
        payload = "x".repeat(450); // as storeOnly's
        sync = new Checkpointing(store);
        async = sync.withDurability(Checkpointing.Durability.ASYNC);
        chain = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();

        Check.equal("sync n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(chainSync()));
        RunResult written = chainAsync();
        Check.equal("async n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(written));
        long[] records = TrellisWorkloads.checkpointPayloads(store, written.getRunId());
        Check.equal("async checkpoints", true, records[0] >= TrellisWorkloads.CHAIN);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + schema + ".floor_rows (run text NOT NULL, seq bigint NOT NULL, payload text NOT NULL, "
                    + "PRIMARY KEY (run, seq))");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the floor's table in " + schema, e);
        }
        Check.equal("floor rows", (long) TrellisWorkloads.CHAIN + 2, jdbcInsertOnly());
    }

    @TearDown
    public void tearDown() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } finally {
            pool.close();
        }
    }

    private RunOptions options(Checkpointing checkpointing) {
        return TrellisWorkloads.options("pg-" + counter++, checkpointing);
    }

    /** Chain of 100, every step's checkpoint committed before the next node runs. */
    @Benchmark
    public RunResult chainSync() {
        return TrellisWorkloads.invoke(chain, input, options(sync));
    }

    /** Chain of 100, every step's checkpoint written behind the run (the run's end waits for the last). */
    @Benchmark
    public RunResult chainAsync() {
        return TrellisWorkloads.invoke(chain, input, options(async));
    }

    /**
     * What a SYNC run of the chain asks of the store, without the runtime: a claim, 102 appends of a 450-char payload
     * (a step's delta is about that long), the release.
     */
    @Benchmark
    public long storeOnly() {
        return StoreWorkloads.appendRun(store, "pg-store-" + counter++, TrellisWorkloads.CHAIN + 2, 450);
    }

    /**
     * The floor of a SYNC run's store traffic: as many durable writes as its appends (102), each the cheapest one this
     * JVM can make — one prepared single-row {@code INSERT} of the same 450-char payload into a plain table, committed
     * on its own (autocommit, the server's {@code synchronous_commit}), over the same pool and driver, without any of a
     * checkpoint store's checks (lease, fencing, sequence). What {@link #storeOnly} adds to it is the store's; what
     * the SYNC chain adds beyond {@link #storeOnly} is the runtime's.
     */
    @Benchmark
    public long jdbcInsertOnly() {
        String run = "floor-" + counter++;
        long rows = 0;
        for (int seq = 0; seq < TrellisWorkloads.CHAIN + 2; seq++) {
            try (Connection c = pool.getConnection();
                 PreparedStatement insert = c.prepareStatement(
                         "INSERT INTO " + schema + ".floor_rows (run, seq, payload) VALUES (?, ?, ?)")) {
                insert.setString(1, run);
                insert.setLong(2, seq);
                insert.setString(3, payload);
                rows += insert.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException("floor insert failed", e);
            }
        }
        return rows;
    }

    /** Chain of 100 without checkpoints: the reference. */
    @Benchmark
    public RunResult chainPlain() {
        return TrellisWorkloads.invoke(chain, input);
    }
}
