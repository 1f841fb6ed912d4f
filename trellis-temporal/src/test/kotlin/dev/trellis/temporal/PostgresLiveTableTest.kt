package dev.trellis.temporal

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.events
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.flow.transformWhile
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.time.Duration
import kotlin.time.Duration.Companion.seconds

/**
 * `PostgresLiveEvents` on its own (`docs/temporal.md`, "Live events across JVMs"): repeats are written once, a late
 * subscriber reads a run from its first event in publishing order, a subscriber waiting gets what is published after
 * it subscribed, and pruning deletes the rows of ended runs only.
 */
class PostgresLiveTableTest {
    private val table = "trellis_live_" + TestPostgres.newSchema().removePrefix("trellis_test_")
    private val release = Files.createTempFile("trellis-live-table", "")
    private val graph = CrossJvmGraph.graph(release)

    @AfterEach
    fun tearDown() {
        Files.deleteIfExists(release)
        TestPostgres.dataSource.connection.use {
            c ->
            c.createStatement().use { it.execute("DROP TABLE IF EXISTS $table") }
        }
    }

    /** The events of a local run of the graph as run [runId]'s, keyed as the workflow keys them. */
    private fun published(runId: String): List<LiveEvent> =
        runBlocking { graph.events(options = RunOptions(runId = runId)).toList() }.map { event ->
            val node = (event as? RunEvent.NodeEvent)
            LiveEvent(EventKey(runId, node?.path ?: "", node?.execution ?: 0, 0, event.sequence), event)
        }

    private fun PostgresLiveEvents.until(runId: String): List<LiveEvent> = runBlocking {
        withTimeout(60.seconds) {
            subscribe(runId, graph).transformWhile {
                emit(it)
                !it.event.isTerminal
            }.toList()
        }
    }

    @Test
    fun `repeats are written once and a late subscriber reads the run from its start`() {
        val events = published("table-1")
        PostgresLiveEvents(TestPostgres.dataSource, table).use { live ->
            for (event in events) {
                live.publish(event)
                live.publish(event) // at least once in
            }
            live.flush(Duration.ofSeconds(60)) shouldBe true
            val read = live.until("table-1")
            read.map { it.key.toString() } shouldBe events.map { it.key.toString() }
            read.map { CrossJvmGraph.describe(it.event) } shouldBe events.map { CrossJvmGraph.describe(it.event) }
            live.dropped shouldBe 0
        }
    }

    @Test
    fun `a waiting subscriber gets what is published after it, by notification or poll`(): Unit = runBlocking {
        val events = published("table-2")
        PostgresLiveEvents(TestPostgres.dataSource, table, pollInterval = Duration.ofSeconds(30)).use { live ->
            val first = live.subscribe("table-2", graph)
            // Nothing is there yet: the subscriber waits for the notification of the first insert.
            val waiting = async(Dispatchers.IO) {
                withTimeout(60.seconds) { first.take(events.size).toList() }
            }
            Thread.sleep(200)
            for (event in events) live.publish(event)
            waiting.await().map { it.key.toString() } shouldBe events.map { it.key.toString() }
        }
    }

    @Test
    fun `pruning deletes the rows of runs that ended longer ago than the retention, and no others`() {
        val ended = published("table-ended")
        val running = published("table-running").dropLast(1) // no terminal event yet
        PostgresLiveEvents(TestPostgres.dataSource, table, retention = Duration.ZERO).use { live ->
            (ended + running).forEach(live::publish)
            live.flush(Duration.ofSeconds(60)) shouldBe true
            Thread.sleep(20)
            live.prune() shouldBe ended.size
            live.prune() shouldBe 0
            count("table-ended") shouldBe 0
            count("table-running") shouldBe running.size
        }
    }

    private fun count(runId: String): Int = TestPostgres.dataSource.connection.use { c ->
        c.prepareStatement("SELECT count(*) FROM $table WHERE run_id = ?").use {
            it.setString(1, runId)
            it.executeQuery().use { rs -> rs.next().let { rs.getInt(1) } }
        }
    }
}
