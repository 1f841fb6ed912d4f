package dev.trellis.fleet

import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.time.Duration
import java.util.Collections
import java.util.concurrent.TimeUnit
import javax.sql.DataSource

/**
 * A worker whose queue claim was taken over while its node ran, before its heartbeat noticed: the node's
 * [FleetRunContext.checkHeld] finds the claim lost. The run is a later claim's to finish — the stale worker's run
 * ends as a lost claim (cancelled, like the heartbeat does it), never as a failure recorded in the run's checkpoints.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FleetLostClaimTest {
    private val schema = TestPostgres.newSchema()
    private val pool = TestGraphs.pool(12)
    private val client = FleetClient(pool, schema)
    private val workers = mutableListOf<FleetWorker>()

    @AfterEach
    fun cleanUp() {
        workers.forEach { it.shutdown(Duration.ofSeconds(10)) }
        client.close()
        pool.close()
        TestPostgres.dropSchema(schema)
    }

    object Fenced : StateSchema("fenced") {
        val by = key("by", default = "")
        val done = key("done", default = false)
    }

    /** The first claim's `work` waits at [entered]/[proceed] before it checks its claim and writes the ledger. */
    private val entered = CompletableDeferred<Unit>()
    private val proceed = CompletableDeferred<Unit>()

    private fun graph(dataSource: DataSource): Graph {
        val ledger = "$schema.ledger"
        return graph("fenced", Fenced) {
            val work = node("work") {
                val claim = checkNotNull(FleetRunContext.current())
                if (claim.attempt == 1) {
                    entered.complete(Unit)
                    proceed.await()
                }
                withContext(Dispatchers.IO) {
                    dataSource.connection.use { c ->
                        c.autoCommit = false
                        claim.checkHeld(c)
                        c.prepareStatement("INSERT INTO $ledger (run_id, attempt, worker) VALUES (?, ?, ?)").use {
                            it.setString(1, claim.runId)
                            it.setInt(2, claim.attempt)
                            it.setString(3, claim.workerId)
                            it.executeUpdate()
                        }
                        c.commit()
                    }
                }
                set(Fenced.by, claim.workerId)
            }
            val finish = node("finish") { set(Fenced.done, true) }
            start(work)
            work then finish
        }
    }

    private class Seen : FleetObserver {
        val lost: MutableList<String> = Collections.synchronizedList(mutableListOf())
        val finished: MutableList<String> = Collections.synchronizedList(mutableListOf())

        override fun lost(runId: String, attempt: Int) {
            lost += "$runId#$attempt"
        }

        override fun finished(runId: String, attempt: Int, status: FleetStatus) {
            finished += "$runId#$attempt $status"
        }
    }

    private fun worker(id: String, lease: Duration, observer: FleetObserver): FleetWorker = FleetWorker(
        pool,
        FleetWorkerOptions(
            schema = schema,
            workerId = id,
            concurrency = 2,
            leaseDuration = lease,
            // The stale worker's heartbeat must not find the lost claim first: this test is about the node finding it.
            heartbeatInterval = lease.minusSeconds(1),
            pollInterval = Duration.ofMillis(100),
            observer = observer,
        ),
    ).register(graph(pool), 1).start().also { workers += it }

    @Test
    fun `a node that finds its claim taken over ends the run as lost, and a later claim completes it`(): Unit =
        runBlocking {
            val staleSeen = Seen()
            val stale = worker("stale", Duration.ofSeconds(60), staleSeen)
            pool.connection.use { c ->
                c.createStatement().use {
                    it.execute(
                        "CREATE TABLE $schema.ledger (run_id TEXT NOT NULL, attempt INTEGER NOT NULL, " +
                            "worker TEXT NOT NULL)",
                    )
                }
            }
            val run = client.submit(Submission("fenced", 1, "{}", runId = "lost-1"))
            withTimeout(30_000) { entered.await() }

            // The stale worker's queue lease runs out (as if it had stalled); its store lease still holds.
            pool.connection.use { c ->
                c.prepareStatement(
                    "UPDATE $schema.trellis_fleet_runs SET lease_until = clock_timestamp() - interval '1 second' " +
                        "WHERE run_id = ?",
                ).use {
                    it.setString(1, "lost-1")
                    it.executeUpdate() shouldBe 1
                }
            }
            // Readers see the claim lost (what Trellis Studio shows), before any worker takes it over.
            val lapsed = client.info("lost-1")!!
            lapsed.claimLapsed shouldBe true
            lapsed.worker shouldBe "stale"
            lapsed.lostClaims shouldBe 0
            client.lostClaims().map { it.runId } shouldBe listOf("lost-1")
            val freshSeen = Seen()
            worker("fresh", Duration.ofSeconds(4), freshSeen)
            withTimeout(30_000) {
                while (attemptOf("lost-1") < 2) delay(20)
            }

            // The stale node goes on: its side effect is refused, and its run must not record a failure.
            proceed.complete(Unit)
            val result = withTimeout(60_000) { run.await() }

            withClue("stale: lost ${staleSeen.lost}, finished ${staleSeen.finished}; fresh: ${freshSeen.finished}") {
                result.status shouldBe FleetStatus.COMPLETED
                staleSeen.lost shouldBe listOf("lost-1#1")
                // Claim 1 records no end; a later claim (by either worker: the stale one is healthy again) completes.
                (staleSeen.finished + freshSeen.finished).none { it.startsWith("lost-1#1 ") } shouldBe true
            }
            withClue("checkpoint statuses: ${run.history().map { it.status }}") {
                run.history().none { it.status == "FAILED" } shouldBe true
            }
            // The queue counts the lost claim: the next claim took the run from under a lapsed lease.
            val row = client.info("lost-1")!!
            withClue("row $row") {
                row.lostClaims shouldBeGreaterThanOrEqual 1
                row.claimLapsed shouldBe false
                (row.claimedAt!! > row.startedAt!!) shouldBe true
            }
            client.lostClaims().shouldBeEmpty()
            // The side effect landed once, by the claim that completed the run; never by the lost claim 1.
            val effects = ledger()
            effects.size shouldBe 1
            effects.single().attempt shouldBe result.attempt
            result.state(graph(pool))[Fenced.by] shouldBe effects.single().worker
            // The lost run gave its slot back: the stale worker is idle and shuts down drained.
            withTimeout(10_000) {
                while (stale.activeRuns > 0) delay(20)
            }
            stale.shutdown(Duration.ofSeconds(5)) shouldBe true
        }

    private fun attemptOf(runId: String): Int = pool.connection.use { c ->
        c.prepareStatement("SELECT attempt FROM $schema.trellis_fleet_runs WHERE run_id = ?").use {
            it.setString(1, runId)
            it.executeQuery().use { rs -> if (rs.next()) rs.getInt(1) else 0 }
        }
    }

    private class Effect(val attempt: Int, val worker: String)

    private fun ledger(): List<Effect> = pool.connection.use { c ->
        c.createStatement().use { s ->
            s.executeQuery("SELECT attempt, worker FROM $schema.ledger").use { rs ->
                buildList { while (rs.next()) add(Effect(rs.getInt(1), rs.getString(2))) }
            }
        }
    }
}
