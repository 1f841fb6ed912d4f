package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

/**
 * A run that stops after a failure was routed resumes into the handler, not into the failed node
 * (`docs/semantics.md` §13.3, persistence); [newStore] called again stands for another process.
 */
abstract class ErrorRoutePersistenceContract {
    protected abstract fun newStore(): CheckpointStore

    protected open fun cleanUp() {}

    @AfterEach
    fun tearDown() = cleanUp()

    object Research : StateSchema("research-routes") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val error = key<NodeError?>("error", default = null)
    }

    @Test
    fun `a crash in the handler resumes into the handler, and the failed node does not run again`(): Unit = runBlocking {
        val searches = AtomicInteger()
        val fallbacks = AtomicInteger()
        val inFallback = CompletableDeferred<Unit>()
        val g = graph("routed", Research) {
            val plan = node("plan") { set(Research.log, listOf("plan")) }
            val search = node("search", retry = Retry.fixed(2, 1.milliseconds)) {
                searches.incrementAndGet()
                throw IOException("search is down")
            }
            val fallback = node("fallback") {
                if (fallbacks.incrementAndGet() == 1) {
                    inFallback.complete(Unit)
                    awaitCancellation() // the process "dies" here
                }
                set(Research.log, listOf("fallback: ${get(Research.error)?.message}"))
            }
            val write = node("write") { set(Research.log, listOf("write")) }
            start(plan)
            plan then search
            search then write
            search.onFailure(fallback, error = Research.error)
            fallback then write
        }
        val options = { store: CheckpointStore -> RunOptions(runId = "routed-1", checkpointing = Checkpointing(store)) }
        val job = launch { g.invoke(options = options(newStore())) }
        withTimeout(30_000) { inFallback.await() }
        job.cancelAndJoin()
        searches.get() shouldBe 2

        val store = newStore()
        g.stateAt(store, "routed-1")[Research.error] shouldBe
            NodeError("search", IOException::class.java.name, "search is down", 2)
        val done = withTimeout(30_000) { g.resume("routed-1", options(store)) }
        done.status shouldBe Status.COMPLETED
        done.state[Research.log] shouldContainExactly listOf("plan", "fallback: search is down", "write")
        searches.get() shouldBe 2 // not re-run
        fallbacks.get() shouldBe 2
        done.node("search").status shouldBe Status.FAILED
        done.errors shouldBe emptyList()
    }
}

/** [ErrorRoutePersistenceContract] on the in-memory store. */
class InMemoryErrorRoutePersistenceTest : ErrorRoutePersistenceContract() {
    private val store = InMemoryCheckpointStore()

    override fun newStore(): CheckpointStore = store
}

/** [ErrorRoutePersistenceContract] on a temporary SQLite file; every store opens it anew. */
class SqliteErrorRoutePersistenceTest : ErrorRoutePersistenceContract() {
    private val db = SqlDatabase(Backend.SQLITE)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}

/** [ErrorRoutePersistenceContract] on a fresh PostgreSQL schema. */
class PostgresErrorRoutePersistenceTest : ErrorRoutePersistenceContract() {
    private val db = SqlDatabase(Backend.POSTGRES)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}
