package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.UnreadableCheckpointException
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.loadSnapshot
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import dev.trellis.runtime.takeSnapshot
import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.time.Duration
import java.time.Instant

/**
 * Whatever is wrong with a stored run — a corrupt column, a position no runtime wrote, an id no database can hold,
 * a lease another process holds — the error names the run (and the checkpoint) and what happened, never a raw
 * parser or index error. Real SQLite and PostgreSQL.
 */
class ErrorsNameTheRunTest {
    object Doc : StateSchema("doc") {
        val text = key("text", default = "")
        val approved = key("approved", default = "")
    }

    private val steps = graph("steps", Doc) {
        val a = node("a") { set(Doc.text, "a") }
        val b = node("b") { set(Doc.text, get(Doc.text) + "b") }
        val c = node("c") { set(Doc.text, get(Doc.text) + "c") }
        start(a)
        a then b
        b then c
    }

    private fun options(db: SqlDatabase, runId: String?, owner: String = "worker-a") = RunOptions(
        runId = runId,
        checkpointing = Checkpointing(db.store(), owner = owner),
    )

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a corrupt column names the run and the checkpoint, and listing skips the row`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val options = options(db, "corrupt")
                steps.invoke(options = options).status shouldBe Status.COMPLETED
                val store = options.checkpointing!!.store
                val stored = store.history("corrupt").size
                val corruptions = mutableListOf(
                    "created_at = 'yesterday'",
                    "kind = 'SIDEWAYS'",
                    "metadata = '{not json'",
                )
                if (backend == Backend.SQLITE) corruptions += "schema_version = 'v1'" // SQLite keeps any text
                for ((i, corruption) in corruptions.withIndex()) {
                    val sequence = i + 1L
                    db.sql("UPDATE {checkpoints} SET $corruption WHERE run_id = 'corrupt' AND sequence = $sequence")
                    val e = shouldThrow<UnreadableCheckpointException> { store.get("corrupt", sequence) }
                    e.message!! shouldContain "Checkpoint $sequence of run 'corrupt'"
                    e.message!! shouldContain "column ${corruption.substringBefore(" =")} is corrupt"
                    val loading = shouldThrow<CheckpointFormatException> { steps.stateAt(store, "corrupt", sequence) }
                    loading.message!! shouldContain "Checkpoint $sequence of run 'corrupt' cannot be loaded"
                }
                // Listing goes on: the unreadable rows are left out, the others listed.
                steps.checkpoints(store, "corrupt").map { it.sequence } shouldBe
                    (corruptions.size + 1L..stored.toLong()).toList()
                steps.stateAt(store, "corrupt")[Doc.text] shouldBe "abc"
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a position no runtime wrote is refused on load, naming what is wrong`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val options = options(db, "edited")
                steps.invoke(options = options)
                val store = options.checkpointing!!.store
                val original = store.latest("edited")!!
                original.payload shouldContain "\"count\":1,\"status\":\"COMPLETED\"}"
                val edits = listOf(
                    Pair("\"count\":1,\"status\":\"COMPLETED\"}", "\"count\":1,\"status\":\"BOGUS\"}") to
                        "status 'BOGUS'",
                    Pair("{\"count\":1,", "{\"count\":-1,") to "with -1 executions",
                    Pair("\"totalExecutions\":3", "\"totalExecutions\":-5") to "-5 executions in all",
                )
                for ((edit, expected) in edits) {
                    original.payload shouldContain edit.first
                    val edited = original.payload.replaceFirst(edit.first, edit.second)
                    val latest = store.latest("edited")!!
                    val lease = store.claim("edited", "editor")
                    store.append(
                        lease,
                        CheckpointRecord(
                            "edited",
                            latest.sequence + 1,
                            latest.sequence,
                            latest.graphId,
                            latest.schemaVersion,
                            Instant.now(),
                            "INTERRUPTED",
                            CheckpointRecord.Kind.FULL,
                            edited,
                        ),
                    )
                    store.release(lease)
                    val e = shouldThrow<CheckpointFormatException> { steps.stateAt(store, "edited") }
                    e.message!! shouldContain expected
                    e.message!! shouldContain "run 'edited'"
                    shouldThrow<CheckpointFormatException> { steps.resume("edited", options) }
                    shouldThrow<CheckpointFormatException> { steps.loadSnapshot(edited) }
                }
                // A snapshot of a checkpoint written by the runtime still loads.
                val snapshot = steps.takeSnapshot(store, "edited", 1).toJson()
                steps.loadSnapshot(snapshot).runId shouldBe "edited"
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `run ids outside the policy are refused up front, without echoing them whole`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val store = db.store()
                val huge = "x".repeat(1_000_000)
                for (bad in listOf("nul\u0000id", huge, "lone\uD800", "lone\uDBFF", " ")) {
                    val e = shouldThrow<IllegalArgumentException> { store.claim(bad, "worker-a") }
                    e.message!!.length shouldBeLessThan 1_000
                    shouldThrow<IllegalArgumentException> { steps.invoke(options = options(db, bad)) }
                }
                shouldThrow<IllegalArgumentException> { store.claim(huge, "worker-a") }.message!! shouldContain
                    "1000000 characters"
                // What the policy allows works: any text without NUL up to 256 characters, pairs of surrogates too.
                val allowed = listOf(
                    "run-1",
                    "x".repeat(256),
                    "emoji-\uD83D\uDE00",
                    "Robert'); DROP TABLE x;--",
                    "two\nlines",
                )
                for (good in allowed) {
                    steps.invoke(options = options(db, good)).status shouldBe Status.COMPLETED
                }
                db.store().runs().size shouldBe 5
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a lease taken over and released since says so instead of naming a null owner`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val clock = TestClock(Instant.parse("2026-01-01T00:00:00Z"))
                val a = db.store(clock, Duration.ofSeconds(10))
                val b = db.store(clock, Duration.ofSeconds(10))
                val lease = a.claim("taken", "worker-a")
                clock.advance(Duration.ofSeconds(11))
                b.release(b.claim("taken", "worker-b"))
                val record = CheckpointRecord(
                    "taken",
                    1,
                    null,
                    "steps",
                    1,
                    clock.instant(),
                    "RUNNING",
                    CheckpointRecord.Kind.FULL,
                    "{}",
                )
                val e = shouldThrow<FencedOutException> { a.append(lease, record) }
                e.message!! shouldNotContain "'null'"
                e.message!! shouldContain "took over run 'taken' at epoch 2 and has since released it"
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a second owner racing a resume gets RunOwnedException, not a missing interrupt`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val holding = CompletableDeferred<Unit>()
                val release = CompletableDeferred<Unit>()
                val approval = graph("approval", Doc) {
                    val ask = node("ask") { set(Doc.approved, interrupt("ok?")) }
                    val work = node("work") {
                        holding.complete(Unit)
                        release.await()
                        set(Doc.text, "done")
                    }
                    start(ask)
                    ask then work
                }
                approval.invoke(options = options(db, "race")).status shouldBe Status.INTERRUPTED
                val first = async { approval.resume("race", options(db, null, "worker-a"), "yes") }
                holding.await() // worker-a answered and holds the run
                val e = shouldThrow<RunOwnedException> { approval.resume("race", options(db, null, "worker-b"), "yes") }
                e.owner shouldBe "worker-a"
                release.complete(Unit)
                first.await().status shouldBe Status.COMPLETED
            }
        }
    }
}
