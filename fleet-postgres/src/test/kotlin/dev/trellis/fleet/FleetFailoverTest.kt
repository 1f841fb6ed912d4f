package dev.trellis.fleet

import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Path
import java.util.UUID
import java.util.concurrent.TimeUnit

/**
 * Three worker JVMs run 1,000 runs of a ten-node graph from one queue; one is killed with SIGKILL midway, another is
 * stopped with SIGSTOP past its lease and then continued. Every run completes exactly once, no completed node runs
 * again (the side-effect ledger), nothing is left behind, and nothing the stopped worker writes after losing its
 * runs lands.
 */
class FleetFailoverTest {
    @TempDir
    lateinit var dir: Path

    private val runs = 1_000
    private val leaseMillis = 3_000L

    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    fun `three workers, one killed and one stopped past its lease, complete every run exactly once`(): Unit = runBlocking {
        val schema = TestPostgres.newSchema()
        val pool = TestGraphs.pool(4)
        val client = FleetClient(pool, schema)
        val workers = (1..3).map {
            WorkerJvm("w$it", listOf(schema, "w$it", "8", "$leaseMillis"), dir.resolve("w$it.out").toFile())
        }
        val (killed, stopped, steady) = workers
        try {
            pool.connection.use { c ->
                c.createStatement().use { it.execute("CREATE SCHEMA IF NOT EXISTS $schema") }
                c.createStatement().use { it.execute(ChainGraph.ledgerDdl(schema)) }
            }
            for (w in workers) {
                waitFor(120, "${w.name} to start: ${w.output()}") {
                    check(w.process.isAlive) { "${w.name} died: ${w.output()}" }
                    w.lines().contains("READY")
                }
            }
            val prefix = "fo-" + UUID.randomUUID().toString().take(8)
            val ids = (0 until runs).map { "$prefix-$it" }
            // Queued first, released at once: the workers then have a full queue to compete for.
            val later = java.time.Instant.now().plus(java.time.Duration.ofHours(1))
            ids.forEachIndexed { i, id ->
                client.submit(Submission("chain", 1, """{"idx": $i}""", runId = id, notBefore = later))
            }
            pool.connection.use { c ->
                c.createStatement().use { it.executeUpdate("UPDATE $schema.trellis_fleet_runs SET not_before = now()") }
            }

            var heldAtStop = 0L
            var stoppedAt = 0L
            var mark = -1L
            val state = {
                runBlocking {
                    val lost = stopped.lines().count { it.startsWith("LOST ") }
                    "${client.counts()}; running: ${client.list(FleetStatus.RUNNING, 20)}; w2 held $heldAtStop runs " +
                        "when stopped, continued: ${mark >= 0}, claims it reported lost: $lost\n" +
                        workers.joinToString("\n") { "${it.name}: ${it.output()}" }
                }
            }
            waitFor(360, "all runs to complete", state) {
                for (paused in client.list(FleetStatus.PAUSED, 500)) client.run(paused.runId).answer("yes")
                val completed = client.counts().single().completed
                if (completed >= runs / 5 && killed.process.isAlive) {
                    killed.process.destroyForcibly() // SIGKILL: no drain, no release
                    killed.process.waitFor()
                }
                val stopNow = completed >= runs / 2 || (completed >= runs / 3 && held(pool, schema, "w2") >= 4)
                if (stopNow && stoppedAt == 0L) {
                    stopped.signal("STOP")
                    stoppedAt = System.nanoTime()
                    heldAtStop = held(pool, schema, "w2")
                }
                if (stoppedAt != 0L && mark < 0) {
                    val frozen = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt)
                    if (frozen > 2 * leaseMillis && (held(pool, schema, "w2") == 0L || frozen > 5 * leaseMillis)) {
                        mark = maxLedgerId(pool, schema)
                        stopped.signal("CONT")
                    }
                }
                check(steady.process.isAlive) { "w3 died: ${steady.output()}" }
                val failed = client.list(FleetStatus.FAILED, 5)
                check(failed.isEmpty()) {
                    "runs failed: " + failed.map { it.runId to client.run(it.runId).result().error } +
                        workers.joinToString("\n") { "${it.name}: ${it.output()}" }
                }
                // Done when every run completed and the stopped worker was continued and, if it held runs when it was
                // stopped, has found at least one of them lost: the other workers may complete every run while it is
                // frozen, and it reports its lost claims only once it runs again (its next heartbeat or recorded end).
                completed == runs.toLong() && mark >= 0 &&
                    (heldAtStop == 0L || stopped.lines().any { it.startsWith("LOST ") })
            }
            withClue("the killed worker was killed") { killed.process.exitValue() shouldBe 137 }
            withClue("the stopped worker was continued") { (mark >= 0) shouldBe true }

            // Every run completed exactly once: one recorded COMPLETED end per run over all workers, none failed.
            val counts = client.counts().single()
            listOf(counts.queued, counts.running, counts.paused, counts.failed) shouldBe listOf(0L, 0L, 0L, 0L)
            val finishes = workers.flatMap { w -> w.lines().filter { it.startsWith("FINISH ") }.map { it.split(" ") } }
            val completions = finishes.filter { it[3] == "COMPLETED" }.groupingBy { it[1] }.eachCount()
            val results = results(pool, schema)
            val ledger = ledger(pool, schema)
            // The killed worker may have recorded a run's end and been killed before it printed its line: a run
            // without a FINISH line must have been completed by that worker (its last node ran in the completing claim).
            val completedBy = ids.associateWith { id ->
                val last = Json.parseToJsonElement(results.getValue(id)).jsonObject
                    .getValue("a${ChainGraph.NODES}").jsonPrimitive.int
                ledger[id to "n${ChainGraph.NODES}"].orEmpty().filter { it.attempt == last }.map { it.worker }
            }
            val unreported = ids.filter { it !in completions }
            withClue(
                "completed runs without a FINISH line, by completing worker: ${unreported.associateWith { completedBy[it] }}",
            ) {
                unreported.all { completedBy[it] == listOf("w1") } shouldBe true
            }
            (completions.keys - ids.toSet()) shouldBe emptySet()
            withClue("runs completed more than once: ${completions.filterValues { it != 1 }}") {
                completions.values.all { it == 1 } shouldBe true
            }
            // Each run that asks for approval paused once. The killed worker may have recorded a pause and been killed
            // before it printed its line: a pause without a line must be a claim of that worker's that it never
            // reported ended.
            val pauses = finishes.filter { it[3] == "PAUSED" }.groupingBy { it[1] }.eachCount()
            val asking = ids.filterIndexed { i, _ -> i % ChainGraph.INTERRUPT_EVERY == 0 }
            withClue("runs paused more than once: ${pauses.filterValues { it != 1 }}") {
                pauses.values.all { it == 1 } shouldBe true
            }
            (pauses.keys - asking.toSet()) shouldBe emptySet()
            val killedLines = killed.lines().map { it.split(" ") }
            val killedEnded = killedLines.filter { it[0] == "FINISH" || it[0] == "LOST" }.map { it[1] to it[2] }.toSet()
            val killedOpen =
                killedLines.filter { it[0] == "CLAIM" }.map { it[1] to it[2] }.filter { it !in killedEnded }
            val unreportedPauses = asking.filter { it !in pauses }
            withClue("runs without a PAUSED line: $unreportedPauses; w1's claims never reported ended: $killedOpen") {
                unreportedPauses.all { id -> killedOpen.any { it.first == id } } shouldBe true
            }

            // The ledger: each node's side effect once in the claim that completed it, never in a later claim; an
            // earlier claim's only if that claim's worker was killed or stopped while the node ran.
            var rerunsAfterCrash = 0
            for (id in ids) {
                val state = Json.parseToJsonElement(results.getValue(id)).jsonObject
                for (n in 1..ChainGraph.NODES) {
                    val completedIn = state.getValue("a$n").jsonPrimitive.int
                    val rows = ledger[id to "n$n"].orEmpty()
                    withClue("run $id node n$n completed in claim $completedIn; ledger $rows") {
                        rows.count { it.attempt == completedIn } shouldBe 1
                        rows.count { it.attempt > completedIn } shouldBe 0
                        rows.filter { it.attempt < completedIn }.all { it.worker == "w1" || it.worker == "w2" } shouldBe
                            true
                    }
                    rerunsAfterCrash += rows.count { it.attempt < completedIn }
                }
            }
            println(
                "FleetFailoverTest: ${ledger.values.sumOf { it.size }} ledger rows, $rerunsAfterCrash from claims lost mid-node",
            )

            // Nothing the stopped worker did after it was continued landed for the claims it had lost.
            val lost = stopped.lines().filter { it.startsWith("LOST ") }.map { line ->
                line.split(" ").let { it[1] to it[2].toInt() }
            }
            if (heldAtStop > 0) {
                withClue("the stopped worker held $heldAtStop runs; it must find some lost") {
                    lost.shouldNotBeEmpty()
                }
            }
            for ((runId, attempt) in lost) {
                val late = ledger.filterKeys { it.first == runId }.values.flatten()
                withClue("ledger rows of $runId claim $attempt after the stopped worker was continued") {
                    late.count { it.attempt == attempt && it.worker == "w2" && it.id > mark } shouldBe 0
                }
            }
            println("FleetFailoverTest: w2 held $heldAtStop runs when stopped, found ${lost.size} lost after SIGCONT")
        } finally {
            workers.forEach { it.stop(30) }
            client.close()
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    private class Row(val id: Long, val attempt: Int, val worker: String) {
        override fun toString(): String = "#$id claim $attempt by $worker"
    }

    private fun ledger(pool: javax.sql.DataSource, schema: String): Map<Pair<String, String>, List<Row>> =
        pool.connection.use { c ->
            c.createStatement().use { s ->
                s.executeQuery("SELECT run_id, node, id, attempt, worker FROM $schema.ledger ORDER BY id").use { rs ->
                    val map = HashMap<Pair<String, String>, MutableList<Row>>()
                    while (rs.next()) {
                        map.getOrPut(rs.getString(1) to rs.getString(2)) { mutableListOf() } +=
                            Row(rs.getLong(3), rs.getInt(4), rs.getString(5))
                    }
                    map
                }
            }
        }

    private fun results(pool: javax.sql.DataSource, schema: String): Map<String, String> = pool.connection.use { c ->
        c.createStatement().use { s ->
            s.executeQuery("SELECT run_id, result FROM $schema.trellis_fleet_runs").use { rs ->
                buildMap { while (rs.next()) put(rs.getString(1), rs.getString(2)) }
            }
        }
    }

    private fun held(pool: javax.sql.DataSource, schema: String, worker: String): Long = pool.connection.use { c ->
        c.prepareStatement(
            "SELECT count(*) FROM $schema.trellis_fleet_runs WHERE worker = ? AND status = 'RUNNING'",
        ).use {
            it.setString(1, worker)
            it.executeQuery().use { rs ->
                rs.next()
                rs.getLong(1)
            }
        }
    }

    private fun maxLedgerId(pool: javax.sql.DataSource, schema: String): Long = pool.connection.use { c ->
        c.createStatement().use { s ->
            s.executeQuery("SELECT coalesce(max(id), 0) FROM $schema.ledger").use { rs ->
                rs.next()
                rs.getLong(1)
            }
        }
    }

    /** Polls [done] (which may act on what it sees) every 100 ms until it holds, failing after [seconds]. */
    private suspend fun waitFor(
        seconds: Long,
        what: String,
        state: () -> String = { "" },
        done: suspend () -> Boolean,
    ) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
        while (!done()) {
            check(System.nanoTime() < deadline) { "Gave up waiting for $what after $seconds s. ${state()}" }
            kotlinx.coroutines.delay(100)
        }
    }
}
