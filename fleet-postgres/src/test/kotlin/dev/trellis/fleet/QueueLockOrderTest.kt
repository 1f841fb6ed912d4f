package dev.trellis.fleet

import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.fleet.internal.Queue
import dev.trellis.fleet.internal.StoreLeases
import dev.trellis.fleet.internal.Tables
import dev.trellis.fleet.internal.registerGraph
import dev.trellis.fleet.internal.submit
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

/**
 * The queue's transactions lock a run's queue row before its store lease row. A worker recording a run's end (and
 * releasing its store lease) while another worker's claim of the same, lapsed run holds its queue row and wants its
 * store row must wait for that claim, not deadlock with it (a deadlock PostgreSQL breaks by failing one of them: a
 * worker then lost its record of the run's end, seen in a CI run of `FleetFailoverTest`).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class QueueLockOrderTest {
    private val schema = TestPostgres.newSchema()
    private val pool = TestGraphs.pool(4)

    /** Claims run `r` (queue row and store lease, as a worker does) and returns how to record its end. */
    private val finishClaimed: () -> Boolean = run {
        val queue = Queue(pool, Tables(schema))
        val leases = StoreLeases(schema)
        runBlocking { PostgresCheckpointStore(pool, schema).latest("none") } // creates the store's tables
        queue.registerGraph("greeting", 1, "greeting", "{}")
        queue.submit(Submission("greeting", 1, "{}", runId = "r"))
        val claim = queue.claim("w1", arrayOf("greeting@1"), 1, 60_000, leases).single()
        val lease = claim.granted!!.lease
        return@run {
            queue.finish("w1", "r", claim.attempt, FleetStatus.COMPLETED, "{}", null, emptyList(), 0, leases to lease)
        }
    }

    @AfterEach
    fun cleanUp() {
        pool.close()
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `a finish waits for a claim that holds the run's queue row and wants its store row`() {
        pool.connection.use { other ->
            other.autoCommit = false
            // Another worker's claim, half done: it holds the run's queue row...
            other.prepareStatement("SELECT 1 FROM $schema.trellis_fleet_runs WHERE run_id = 'r' FOR UPDATE")
                .use { it.executeQuery().close() }
            val finish = CompletableFuture.supplyAsync(finishClaimed)
            awaitWaitingOnLock()
            // ...and now takes the store row, as its claim of the store lease does: the finish must not hold it.
            other.prepareStatement("SELECT 1 FROM $schema.trellis_runs WHERE run_id = 'r' FOR UPDATE")
                .use { it.executeQuery().close() }
            other.commit()
            finish.get(60, TimeUnit.SECONDS) shouldBe true
        }
        columnOfRun("trellis_fleet_runs", "status") shouldBe "COMPLETED"
        columnOfRun("trellis_runs", "owner") shouldBe null // released with the recorded end
    }

    @Test
    fun `a finish the database rolls back to break a deadlock is run again`() {
        pool.connection.use { other ->
            other.autoCommit = false
            // A transaction taking the rows the other way round (none of the fleet's does): the store row first...
            other.prepareStatement("SELECT 1 FROM $schema.trellis_runs WHERE run_id = 'r' FOR UPDATE")
                .use { it.executeQuery().close() }
            val finish = CompletableFuture.supplyAsync(finishClaimed)
            awaitWaitingOnLock("trellis_runs")
            // ...then the queue row the finish holds. PostgreSQL fails the one that waited first, the finish (its
            // deadlock check comes a second after it began to wait, 300 ms before this one's): it runs again.
            Thread.sleep(300)
            other.prepareStatement("SELECT 1 FROM $schema.trellis_fleet_runs WHERE run_id = 'r' FOR UPDATE")
                .use { it.executeQuery().close() }
            other.commit()
            finish.get(60, TimeUnit.SECONDS) shouldBe true
        }
        columnOfRun("trellis_runs", "owner") shouldBe null
    }

    /** Run `r`'s [column] in [table] of this test's schema. */
    private fun columnOfRun(table: String, column: String): String? = pool.connection.use { c ->
        c.createStatement().use { s ->
            s.executeQuery("SELECT $column FROM $schema.$table WHERE run_id = 'r'").use {
                it.next()
                it.getString(1)
            }
        }
    }

    /** Waits until a session waits for a row lock in a statement on [table] of this test's schema (the finish). */
    private fun awaitWaitingOnLock(table: String = "trellis_fleet_runs") {
        val deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos()
        pool.connection.use { c ->
            while (true) {
                val waiting = c.prepareStatement(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ?",
                ).use {
                    it.setString(1, "%$schema.$table%")
                    it.executeQuery().use { rs -> rs.next() && rs.getLong(1) > 0 }
                }
                if (waiting) return
                check(System.nanoTime() < deadline) { "the finish never waited for a row of $table" }
                Thread.sleep(5)
            }
        }
    }
}
