package dev.trellis.samples.docs.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.ResumableRunException
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.SnapshotPreset
import dev.trellis.runtime.StateMigration
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.loadSnapshot
import dev.trellis.runtime.resume
import dev.trellis.runtime.resumeEvents
import dev.trellis.runtime.retry
import dev.trellis.runtime.stateAt
import dev.trellis.runtime.takeSnapshot
import dev.trellis.samples.docs.persistence.evolution.reviewV1
import dev.trellis.samples.docs.persistence.evolution.reviewV2
import dev.trellis.samples.docs.persistence.review.mailer
import dev.trellis.samples.docs.persistence.review.review
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import dev.trellis.samples.docs.persistence.evolution.Doc as DocV2
import dev.trellis.samples.docs.persistence.review.Doc as ReviewDoc

/** The Kotlin examples of `docs/persistence.md`, as the guide shows them, run and checked. */
class PersistenceGuideTest {
    object Order : StateSchema("order") {
        val item = key<String>("item")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** Which nodes ran, in order, across the "processes" of a test. */
    private val ran = CopyOnWriteArrayList<String>()

    @BeforeEach
    @AfterEach
    fun removeTheGuidesDatabase() {
        for (suffix in listOf("", "-wal", "-shm")) Files.deleteIfExists(Path.of("runs.db$suffix"))
    }

    /** pack -> approve (asks "ship?") -> ship */
    private val shipping = graph("shipping", Order) {
        val pack = node("pack") {
            ran += "pack"
            set(Order.log, listOf("packed ${get(Order.item)}"))
        }
        val approve = node("approve") {
            val answer = interrupt("Ship ${get(Order.item)}?")
            ran += "approve $answer"
            set(Order.log, listOf("approved $answer"))
        }
        val ship = node("ship") {
            ran += "ship"
            set(Order.log, listOf("shipped"))
        }
        start(pack)
        pack then approve
        approve then ship
    }

    @Test
    fun `the opening example pauses a run and resumes it from another store instance`(): Unit = runBlocking {
        val graph = shipping
        val input = stateOf(Order.item to "books")
        val store = SqliteCheckpointStore(Path.of("runs.db"))
        val options = RunOptions(runId = "order-42", checkpointing = Checkpointing(store))
        val paused = graph.invoke(input, options) // INTERRUPTED: a node asked for input

        // later, in a new process (or after a crash):
        val result = graph.resume("order-42", RunOptions(checkpointing = Checkpointing(store)), "yes")
        paused.status shouldBe Status.INTERRUPTED
        result.status shouldBe Status.COMPLETED
        result.state[Order.log] shouldContainExactly listOf("packed books", "approved yes", "shipped")
        ran shouldContainExactly listOf("pack", "approve yes", "ship")
        store.close()
    }

    /** work (blocks the first time: the run is cancelled there, as by a crash) -> ask -> approve, legal -> done */
    private val steps = AtomicInteger()
    private val release = CompletableDeferred<Unit>()
    private val sequence = graph("sequence", Order) {
        val work = node("work") {
            ran += "work"
            if (steps.incrementAndGet() == 1) {
                release.complete(Unit)
                awaitCancellation()
            }
        }
        val ask = node("ask") { ran += "ask ${interrupt("go?")}" }
        val approve = node("approve") { ran += "approve ${interrupt("approve?")}" }
        val legal = node("legal") { ran += "legal ${interrupt("legal?")}" }
        val done = node("done") { ran += "done" }
        start(work)
        work then ask
        ask then approve
        ask then legal
        approve then done
        legal then done
    }

    @Test
    fun `the resume calls continue a cancelled run, answer one interrupt, then several by node id`(): Unit = runBlocking {
        val graph = sequence
        val store = InMemoryCheckpointStore()
        val runId = "r-resume"
        val options = RunOptions(checkpointing = Checkpointing(store, owner = "this-process"))
        val first = launch {
            val started = RunOptions(runId = runId, checkpointing = Checkpointing(store, owner = "this-process"))
            graph.invoke(stateOf(Order.item to "x"), started)
        }
        release.await()
        first.cancelAndJoin()

        graph.resume(runId, options) // continue a crashed, drained or cancelled run
        graph.resume(runId, options, "yes") // answer the single pending interrupt
        graph.resume(runId, options, mapOf("approve" to "yes", "legal" to "ok")) // answer several, by node id
        graph.resumeEvents(runId, options) // the same as a cold Flow<RunEvent>
        graph.resumeEvents(runId, options, "yes") // ... answering the single pending interrupt
        ran.first() shouldBe "work"
        ran.drop(1).take(2) shouldContainExactly listOf("work", "ask yes")
        ran.drop(3).take(2).toSet() shouldBe setOf("approve yes", "legal ok")
        ran.last() shouldBe "done"
        graph.checkpoints(store, runId).last().status shouldBe "COMPLETED"
    }

    @Test
    fun `a resume with a lease wait takes over a crashed owner's run once its lease lapsed`(): Unit = runBlocking {
        val dir = Files.createTempDirectory("lease-wait")
        val store = SqliteCheckpointStore(dir.resolve("runs.db"), Clock.systemUTC(), Duration.ofSeconds(1))
        val runId = "order-8"
        val paused = RunOptions(runId = runId, checkpointing = Checkpointing(store))
        shipping.invoke(stateOf(Order.item to "ink"), paused).status shouldBe Status.INTERRUPTED
        // The process that resumed it died holding its lease: nobody renews it, it lapses after a second.
        val dead: Lease = store.claim(runId, "crashed-worker")

        resumeCrashed(shipping, store, runId, dead)
        store.close()
    }

    private suspend fun resumeCrashed(graph: Graph, store: CheckpointStore, runId: String, dead: Lease) {
        val checkpointing = Checkpointing(store, leaseWait = Duration.ofMinutes(1))
        val resumed = graph.resume(runId, RunOptions(checkpointing = checkpointing))
        resumed.status shouldBe Status.INTERRUPTED // it asks again: no answer was given
        Instant.now() shouldBeGreaterThanOrEqualTo dead.expiresAt
        store.runs().single { it.runId == runId }.epoch shouldBe dead.epoch + 1
    }

    /** A store whose appends fail as unreachable once, when told to. */
    private class OutageStore(private val inner: CheckpointStore) : CheckpointStore by inner {
        val down = AtomicBoolean()

        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            if (down.compareAndSet(true, false)) {
                val waited = Duration.ofSeconds(30)
                throw CheckpointStoreUnavailableException("outage", "append", record.runId, waited, "down")
            }
            inner.append(lease, record)
        }
    }

    @Test
    fun `a run whose store stays unreachable stops resumable and is resumed later`(): Unit = runBlocking {
        val store = OutageStore(InMemoryCheckpointStore())
        val graph = graph("outage", Order) {
            val pack = node("pack") {
                ran += "pack"
                if (ran.size == 1) store.down.set(true)
            }
            val ship = node("ship") { ran += "ship" }
            start(pack)
            pack then ship
        }
        val input = stateOf(Order.item to "tea")
        val options = RunOptions(runId = "r-outage", checkpointing = Checkpointing(store))
        try {
            graph.invoke(input, options)
        } catch (e: ResumableRunException) {
            // the database is down; later:
            graph.resume(e.runId, options)
        }
        ran shouldContainExactly listOf("pack", "pack", "ship")
        graph.checkpoints(store, "r-outage").last().status shouldBe "COMPLETED"
    }

    @Test
    fun `retry continues a failed run from its last checkpoint before the failure`(): Unit = runBlocking {
        val failures = AtomicInteger()
        val graph = graph("flaky", Order) {
            val pack = node("pack") { ran += "pack" }
            val ship = node("ship") {
                ran += "ship"
                if (failures.incrementAndGet() == 1) error("carrier down")
            }
            start(pack)
            pack then ship
        }
        val store = InMemoryCheckpointStore()
        val runId = "r-retry"
        val options = RunOptions(checkpointing = Checkpointing(store))
        val first = RunOptions(runId = runId, checkpointing = Checkpointing(store))
        runCatching { graph.invoke(stateOf(Order.item to "mugs"), first) }

        val result = graph.retry(runId, options) // Kotlin; graph.retryEvents(runId, options) as a Flow
        result.status shouldBe Status.COMPLETED
        ran shouldContainExactly listOf("pack", "ship", "ship")
    }

    @Test
    fun `the review example pauses on approve, and the answer sends the draft`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val options = RunOptions(runId = "ticket-7", checkpointing = Checkpointing(store))
        val paused = review.invoke(options = options)
        check(paused.status == Status.INTERRUPTED)
        println(paused.interrupts.single().payload) // shown to a reviewer; the process may exit now

        // later, maybe in another process:
        val done = review.resume("ticket-7", RunOptions(checkpointing = Checkpointing(store)), "yes")
        done.status shouldBe Status.COMPLETED
        done.state[ReviewDoc.approved] shouldBe "yes"
        mailer.sent.last() shouldBe "Dear customer, …"
    }

    @Test
    fun `a run with a control that drains on shutdown runs as any other`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val id = "r-drain"
        val graph = graph("drained", Order) {
            val pack = node("pack") { ran += "pack" }
            val ship = node("ship") { ran += "ship" }
            start(pack)
            pack then ship
        }
        val input = stateOf(Order.item to "cups")
        val control = RunControl()
        control.drainOnShutdown() // on SIGTERM / normal JVM exit: drain, wait up to 30 s for the runs to end
        graph.invoke(input, RunOptions(runId = id, control = control, checkpointing = Checkpointing(store)))
        control.activeRuns shouldBe 0
        graph.checkpoints(store, id).last().status shouldBe "COMPLETED"
        ran shouldContainExactly listOf("pack", "ship")
    }

    @Test
    fun `a snapshot leaves the store as JSON and resumes as a new run`(): Unit = runBlocking {
        val graph = review
        val store = InMemoryCheckpointStore()
        graph.invoke(options = RunOptions(runId = "r1", checkpointing = Checkpointing(store))).status shouldBe
            Status.INTERRUPTED
        val appData = buildJsonObject { put("user", "u-1") }
        val snapshot = graph.takeSnapshot(store, "r1", preset = SnapshotPreset.RESUMABLE, appData = appData)
        val json = snapshot.toJson()
        val loaded = graph.loadSnapshot(json) // validates, see below
        val result = graph.resume(loaded, RunOptions()) // a new run continuing where r1 was
        result.status shouldBe Status.INTERRUPTED // approve asks again: a snapshot carries no answers
        result.interrupts.single().nodeId shouldBe "approve"
        loaded.appData["user"]?.jsonPrimitive?.content shouldBe "u-1"
        result.state[ReviewDoc.draft] shouldBe "Dear customer, …"
    }

    @Test
    fun `a migration brings a version 1 checkpoint to version 2`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        reviewV1.invoke(options = RunOptions(runId = "ticket-7", checkpointing = Checkpointing(store))).status shouldBe
            Status.INTERRUPTED
        val graph = reviewV2
        val migrations = listOf(
            StateMigration(from = 1, to = 2) { state -> JsonObject(state + ("title" to JsonPrimitive("untitled"))) },
        )
        graph.resume("ticket-7", RunOptions(checkpointing = Checkpointing(store, migrations = migrations)))
        val state = graph.stateAt(store, "ticket-7")
        state[DocV2.title] shouldBe "untitled"
        state[DocV2.draft] shouldBe "Dear customer, …"
    }
}
