package dev.trellis.runtime.persistence

import dev.trellis.graph.CachePolicy
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.testing.TestClock
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import kotlinx.serialization.Serializable
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.time.Duration
import kotlin.time.Duration.Companion.minutes

/**
 * The node result cache in the checkpoints' database (`docs/semantics.md` §13.5): entries outlive runs and the
 * cache object that stored them, values come back with their keys' types.
 */
abstract class NodeCachePersistenceContract {
    @Serializable
    data class Hit(val title: String, val score: Double, val tags: List<String>)

    object S : StateSchema("cached-search") {
        val query = key("query", default = "")
        val hits = key("hits", default = emptyList<Hit>())
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    protected abstract val db: SqlDatabase

    @AfterEach
    fun cleanUp() = db.close()

    private var bodies = 0

    private val search: Graph = graph("search", S) {
        val search = node("search", cache = CachePolicy(key = { it[S.query] }, ttl = 10.minutes)) {
            bodies++
            set(S.hits, listOf(Hit("About ${get(S.query)}", 0.5, listOf("a", "b"))))
            set(S.log, listOf("searched"))
        }
        start(search)
    }

    @Test
    fun `a hit across runs and across a reopened store returns correctly typed values`() = runTest {
        val clock = TestClock()
        val first = db.cache()
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = first, clock = clock))
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = first, clock = clock))
        bodies shouldBe 1
        first.close()

        // A new cache object on the same database, with the checkpoints there too: as another process would.
        val reopened = db.cache()
        val options = RunOptions(cache = reopened, clock = clock, checkpointing = Checkpointing(db.store(clock)))
        val events = search.events(stateOf(S.query to "q"), options).toList()
        bodies shouldBe 1
        events.filterIsInstance<RunEvent.NodeCacheHit>().single().key shouldBe "q"
        val state = (events.last() as RunEvent.RunCompleted).result.state
        val hit = state[S.hits].single()
        hit.shouldBeInstanceOf<Hit>()
        hit shouldBe Hit("About q", 0.5, listOf("a", "b"))
        state[S.log] shouldBe listOf("searched")
    }

    @Test
    fun `entries expire by the run's clock and expired ones can be removed`() = runTest {
        val clock = TestClock()
        val cache = db.cache()
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = cache, clock = clock))
        clock.advance(Duration.ofMinutes(9))
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = db.cache(), clock = clock))
        bodies shouldBe 1
        clock.advance(Duration.ofMinutes(1))
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = db.cache(), clock = clock))
        bodies shouldBe 2
        cache.removeExpired(clock.now) shouldBe 0 // the second miss stored a fresh entry
        clock.advance(Duration.ofMinutes(10))
        cache.removeExpired(clock.now) shouldBe 1
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = cache, clock = clock))
        bodies shouldBe 3
    }

    @Test
    fun `a store replaces the entry of its key, and keys stay apart`() = runTest {
        val clock = TestClock()
        val cache = db.cache()
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = cache, clock = clock))
        search.invoke(stateOf(S.query to "other"), RunOptions(cache = cache, clock = clock))
        bodies shouldBe 2
        clock.advance(Duration.ofMinutes(10))
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = cache, clock = clock)) // expired: stored again
        search.invoke(stateOf(S.query to "q"), RunOptions(cache = cache, clock = clock))
        bodies shouldBe 3
    }
}

/** [NodeCachePersistenceContract] on a temporary SQLite file; every cache opens it anew. */
class SqliteNodeCacheTest : NodeCachePersistenceContract() {
    override val db = SqlDatabase(Backend.SQLITE)
}

/** [NodeCachePersistenceContract] on a fresh PostgreSQL schema per test. */
class PostgresNodeCacheTest : NodeCachePersistenceContract() {
    override val db = SqlDatabase(Backend.POSTGRES)
}
