package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.trellis.checkpoint.CheckpointRecord;
import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.Lease;
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.AsyncCheckpointStore;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.Status;
import dev.trellis.testing.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** The Java examples of {@code docs/persistence-stores.md}, as the guide shows them, run and checked. */
class StoresGuideJavaTest {
    @BeforeEach
    @AfterEach
    void removeTheGuidesDatabase() throws Exception {
        for (String suffix : List.of("", "-wal", "-shm")) Files.deleteIfExists(Path.of("trellis.db" + suffix));
    }

    @Test
    void aProcessClaimsARunAppendsUnderItsLeaseRenewsAndReleasesIt() throws Exception {
        String payloadJson = "{\"scope\":\"trellis.run\"}";
        AsyncCheckpointStore store = AsyncCheckpointStore.of(new SqliteCheckpointStore(Path.of("trellis.db")));
        Lease lease = store.claim("run-1", "worker-" + ProcessHandle.current().pid()).toCompletableFuture().join();
        store.append(lease, new CheckpointRecord("run-1", 1, null, "support-bot", 1, Instant.now(), "RUNNING",
            CheckpointRecord.Kind.FULL, payloadJson)).toCompletableFuture().join();
        lease = store.renew(lease).toCompletableFuture().join();      // before lease.getExpiresAt()
        store.release(lease).toCompletableFuture().join();            // when the run ends
        assertEquals(payloadJson, store.latest("run-1").toCompletableFuture().join().orElseThrow().getPayload());
        assertNull(store.runs().toCompletableFuture().join().get(0).getOwner());
    }

    @Test
    void aRunnerCheckpointsToPostgresThroughAHikariPool() throws Exception {
        String url = ((PGSimpleDataSource) TestPostgres.INSTANCE.getDataSource()).getUrl();
        String schema = TestPostgres.INSTANCE.newSchema();
        StateSchema state = new StateSchema("count");
        StateKey<Integer> count = Keys.of(state, "count", Integer.class, 0);
        Graph graph = JavaGraph.builder("count", state).node("add", ctx -> ctx.update(count, c -> c + 1)).start("add").build();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);                     // e.g. "jdbc:postgresql://db:5432/app?user=trellis"
        config.setMaximumPoolSize(32);              // at most the store dispatcher's parallelism (64 by default)
        try (HikariDataSource pool = new HikariDataSource(config);
             PostgresCheckpointStore store = new PostgresCheckpointStore(pool, schema)) {
            TrellisRunner runner = Trellis.runner(graph, JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build());
            assertEquals(Status.COMPLETED, runner.invoke(Map.of()).getStatus());
            assertEquals(1, runner.runsAsync().join().size());
        } finally {
            TestPostgres.INSTANCE.dropSchema(schema);
        }
    }
}
