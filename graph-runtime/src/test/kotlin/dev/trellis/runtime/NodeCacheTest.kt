package dev.trellis.runtime

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.InMemoryNodeCache
import dev.trellis.checkpoint.NodeCacheKey
import dev.trellis.graph.CachePolicy
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.internal.execution.interceptorTable
import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import kotlinx.serialization.KSerializer
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import org.junit.jupiter.api.Test
import java.io.IOException
import java.time.Duration
import java.time.Instant
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/** The node result cache, `docs/semantics.md` §13.5. */
class NodeCacheTest {
    object S : StateSchema("cache") {
        val query = key("query", default = "")
        val answer = key("answer", default = "")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val items = key("items", default = emptyList<String>())
    }

    /** The same keys, one schema version later. */
    object S2 : StateSchema("cache", version = 2) {
        val query = key("query", default = "")
        val answer = key("answer", default = "")
    }

    private val byQuery = CachePolicy(key = { input -> input[S.query] }, ttl = 10.minutes)

    private fun searchGraph(calls: MutableList<String>, id: String = "search", policy: CachePolicy = byQuery) =
        graph(id, S) {
            val search = node("search", cache = policy) {
                calls += get(S.query)
                set(S.answer, "answer to ${get(S.query)}")
                set(S.log, listOf("searched ${get(S.query)}"))
            }
            start(search)
        }

    private suspend fun dev.trellis.graph.Graph.events(query: String, options: RunOptions): List<RunEvent> {
        val events = events(stateOf(S.query to query), options).toList()
        EventInvariants.check(events)
        return events
    }

    @Test
    fun `a hit skips the body and applies the cached writes as if the body had made them`() = runTest {
        val calls = ArrayList<String>()
        val cache = InMemoryNodeCache()
        val g = searchGraph(calls)
        val first = g.events("kotlin", RunOptions(cache = cache))
        val second = g.events("kotlin", RunOptions(cache = cache))

        calls shouldBe listOf("kotlin")
        first.filterIsInstance<RunEvent.NodeCacheStored>().single().key shouldBe "kotlin"
        first.filterIsInstance<RunEvent.NodeCacheHit>() shouldBe emptyList()
        val hit = second.filterIsInstance<RunEvent.NodeCacheHit>().single()
        hit.nodeId shouldBe "search"
        hit.key shouldBe "kotlin"
        hit.attempt shouldBe 1
        second.filterIsInstance<RunEvent.NodeCacheStored>() shouldBe emptyList()
        val result = (second.last() as RunEvent.RunCompleted).result
        result.state[S.answer] shouldBe "answer to kotlin"
        result.state[S.log] shouldBe listOf("searched kotlin") // a reducer folds the cached update
        result.nodes.getValue("search").status shouldBe Status.COMPLETED
        cache.hits shouldBe 1
        cache.misses shouldBe 1
        cache.stores shouldBe 1

        g.invoke(stateOf(S.query to "java"), RunOptions(cache = cache))
        calls shouldBe listOf("kotlin", "java")
    }

    @Test
    fun `entries expire after their ttl by the run's clock`() = runTest {
        val clock = TestClock()
        val calls = ArrayList<String>()
        val cache = InMemoryNodeCache()
        val g = searchGraph(calls)
        val options = RunOptions(cache = cache, clock = clock)
        val stored = g.events("q", options).filterIsInstance<RunEvent.NodeCacheStored>().single()
        stored.expiresAt shouldBe clock.now.plus(Duration.ofMinutes(10))
        clock.advance(Duration.ofMinutes(9))
        g.invoke(stateOf(S.query to "q"), options)
        calls shouldBe listOf("q")
        clock.advance(Duration.ofMinutes(1)) // exactly at expiry: expired
        g.invoke(stateOf(S.query to "q"), options)
        calls shouldBe listOf("q", "q")
        g.invoke(stateOf(S.query to "q"), options) // stored again
        calls shouldBe listOf("q", "q")
    }

    @Test
    fun `ttl under runTest is measured in virtual time`() = runTest {
        val calls = ArrayList<String>()
        val cache = InMemoryNodeCache()
        val g = searchGraph(calls, policy = CachePolicy(key = { it[S.query] }, ttl = 30.seconds))
        g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache))
        delay(29.seconds)
        g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache))
        calls shouldBe listOf("q")
        delay(1.seconds)
        g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache))
        calls shouldBe listOf("q", "q")
    }

    @Test
    fun `a policy without ttl never expires`() = runTest {
        val clock = TestClock()
        val calls = ArrayList<String>()
        val cache = InMemoryNodeCache()
        val g = searchGraph(calls, policy = CachePolicy(key = { it[S.query] }))
        val options = RunOptions(cache = cache, clock = clock)
        g.events("q", options).filterIsInstance<RunEvent.NodeCacheStored>().single().expiresAt.shouldBeNull()
        clock.advance(Duration.ofDays(3650))
        g.invoke(stateOf(S.query to "q"), options)
        calls shouldBe listOf("q")
    }

    @Test
    fun `entries are kept per graph, schema version and node`() = runTest {
        val calls = ArrayList<String>()
        val cache = InMemoryNodeCache()
        val options = RunOptions(cache = cache)
        val twoNodes = graph("two", S) {
            val a = node("a", cache = byQuery) { calls += "a" }
            val b = node("b", cache = byQuery) { calls += "b" }
            start(a)
            a then b
        }
        twoNodes.invoke(stateOf(S.query to "q"), options)
        twoNodes.invoke(stateOf(S.query to "q"), options)
        calls shouldBe listOf("a", "b")

        calls.clear()
        searchGraph(calls, id = "one").invoke(stateOf(S.query to "q"), options)
        searchGraph(calls, id = "other").invoke(stateOf(S.query to "q"), options)
        calls shouldBe listOf("q", "q")

        calls.clear()
        val v2 = graph("one", S2) {
            start(node("search", cache = CachePolicy(key = { it[S2.query] })) { calls += "v2" })
        }
        v2.invoke(stateOf(S2.query to "q"), options)
        calls shouldBe listOf("v2")
        cache.size shouldBe 5
    }

    @Test
    fun `failures are not cached, and a retried miss stores once, for the attempt that succeeded`() = runTest {
        val cache = InMemoryNodeCache()
        var runs = 0
        val g = graph("flaky", S) {
            start(
                node("search", retry = Retry.fixed(3, 1.seconds), cache = byQuery) {
                    runs++
                    if (attempt == 1) throw IOException("flaky")
                    set(S.answer, "ok")
                },
            )
        }
        val events = g.events("q", RunOptions(cache = cache))
        events.filterIsInstance<RunEvent.NodeCacheStored>().single().attempt shouldBe 2
        cache.stores shouldBe 1
        cache.misses shouldBe 2 // each attempt looks up
        runs shouldBe 2

        val failing = graph("failing", S) {
            start(node("search", cache = byQuery) { throw IOException("down") })
        }
        repeat(2) {
            shouldThrow<GraphRunException> { failing.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)) }
                .cause.shouldBeInstanceOf<IOException>()
        }
        cache.stores shouldBe 1
    }

    @Test
    fun `a timed-out attempt stores nothing`() = runTest {
        val cache = InMemoryNodeCache()
        val g = graph("slow", S) {
            start(
                node("search", timeout = 1.seconds, cache = byQuery) {
                    delay(5.seconds)
                    set(S.answer, "late")
                },
            )
        }
        shouldThrow<GraphRunException> { g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)) }
            .cause.shouldBeInstanceOf<NodeTimeoutException>()
        cache.stores shouldBe 0
    }

    @Test
    fun `the key sees the node's input view and a key outside its read slice fails the attempt`() = runTest {
        val cache = InMemoryNodeCache()
        val g = graph("sliced", S) {
            start(
                node(
                    "search",
                    reads = setOf(S.answer),
                    cache = CachePolicy(key = { it[S.query] }),
                ) { set(S.answer, "x") },
            )
        }
        shouldThrow<GraphRunException> { g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)) }
            .cause.shouldBeInstanceOf<SliceViolationException>()
        cache.stores shouldBe 0
    }

    @Test
    fun `interceptors around the cache see a hit's writes as the body's`() = runTest {
        val cache = InMemoryNodeCache()
        val seen = ArrayList<String?>()
        val g = graph("wrapped", S) {
            val search = node("search", cache = byQuery) { set(S.answer, "secret") }
            search.intercept(NodeInterceptor { chain -> chain.proceed().also { seen += it[S.answer] } })
            config { intercept(NodeInterceptor { chain -> chain.proceed().map(S.answer) { "[redacted]" } }) }
            start(search)
        }
        g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)).state[S.answer] shouldBe "[redacted]"
        g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)).state[S.answer] shouldBe "[redacted]"
        seen shouldBe listOf("secret", "secret") // the cache holds the body's writes, inside the redaction
    }

    @Test
    fun `a run without a cache store fails at its start naming the node and the fix`() = runTest {
        val g = searchGraph(ArrayList())
        val e = shouldThrow<IllegalArgumentException> { g.invoke(stateOf(S.query to "q")) }
        e.message shouldContain "Node 'search' of graph 'search' has a cache policy"
        e.message shouldContain "RunOptions(cache = InMemoryNodeCache())"
    }

    @Test
    fun `without cached nodes a run has no interceptor table, with one the cache is the innermost interceptor`() {
        val plain = graph("plain", S) { start(node("a") {}) }
        interceptorTable(plain, RunOptions(cache = InMemoryNodeCache())).shouldBeNull()
        val outer = NodeInterceptor { it.proceed() }
        val table = interceptorTable(
            searchGraph(ArrayList()),
            RunOptions(cache = InMemoryNodeCache()),
        ).shouldNotBeNull()
        table[0]!!.size shouldBe 1
        val both = interceptorTable(
            searchGraph(ArrayList()),
            RunOptions(cache = InMemoryNodeCache(), interceptors = listOf(outer)),
        )!![0]!!
        both.size shouldBe 2
        both[0] shouldBe outer
    }

    @Test
    fun `an entry that no longer decodes counts as a miss and is replaced`() = runTest {
        val cache = InMemoryNodeCache()
        val key = NodeCacheKey("search", S.version, "search", "q")
        cache.put(key, """{"format":1,"writes":[{"key":"renamed","value":"x"}]}""", null)
        val calls = ArrayList<String>()
        val events = searchGraph(calls).events("q", RunOptions(cache = cache))
        calls shouldBe listOf("q")
        events.filterIsInstance<RunEvent.NodeCacheStored>().single()
        cache.get(key, Instant.EPOCH)!! shouldContain "answer to q"
    }

    /** Writes its value as text and refuses to read it back. */
    private object OneWay : KSerializer<String> {
        override val descriptor = PrimitiveSerialDescriptor("OneWay", PrimitiveKind.STRING)

        override fun serialize(encoder: Encoder, value: String) = encoder.encodeString(value)

        override fun deserialize(decoder: Decoder): String = throw IllegalStateException("one way only")
    }

    object Bad : StateSchema("bad") {
        val q = key("q", default = "")
        val oneWay = key("oneWay", OneWay, String::class.java, false, "")
    }

    @Test
    fun `a value that does not read back fails the first store naming the node, the key and the fix`() = runTest {
        val cache = InMemoryNodeCache()
        val g = graph("bad", Bad) {
            start(node("write", cache = CachePolicy(key = { it[Bad.q] })) { set(Bad.oneWay, "x") })
        }
        val error = shouldThrow<GraphRunException> { g.invoke(Bad.initialState(), RunOptions(cache = cache)) }.cause
        error.shouldBeInstanceOf<IllegalStateException>()
        val message = error.message!!
        message shouldContain "Node 'write'"
        message shouldContain "state key 'oneWay'"
        message shouldContain "remove the node's cache policy"
        cache.stores shouldBe 0
    }

    @Test
    fun `concurrent misses for one key both run the body and the last store wins`() = runTest {
        val cache = InMemoryNodeCache()
        var bodies = 0
        val g = graph("slow", S) {
            start(
                node("search", cache = byQuery) {
                    bodies++
                    delay(1.seconds)
                    set(S.answer, "run $bodies")
                },
            )
        }
        (1..2).map { async { g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)) } }.awaitAll()
        bodies shouldBe 2
        cache.stores shouldBe 2
        cache.size shouldBe 1
        g.invoke(stateOf(S.query to "q"), RunOptions(cache = cache)).state[S.answer] shouldBe "run 2"
        bodies shouldBe 2
    }

    @Test
    fun `an interrupting attempt stores nothing and its resumed execution bypasses the cache`() = runTest {
        val cache = InMemoryNodeCache()
        val store = InMemoryCheckpointStore()
        var bodies = 0
        val g = graph("ask", S) {
            start(
                node("ask", cache = byQuery) {
                    bodies++
                    set(S.answer, interrupt("approve ${get(S.query)}?"))
                },
            )
        }
        val options = RunOptions(runId = "r1", cache = cache, checkpointing = Checkpointing(store))
        g.invoke(stateOf(S.query to "q"), options).status shouldBe Status.INTERRUPTED
        cache.stores shouldBe 0
        val events = g.resumeEvents("r1", options, mapOf("ask" to "yes")).toList()
        (events.last() as RunEvent.RunCompleted).result.state[S.answer] shouldBe "yes"
        events.filterIsInstance<RunEvent.NodeCacheStored>() shouldBe emptyList()
        events.filterIsInstance<RunEvent.NodeCacheHit>() shouldBe emptyList()
        cache.stores shouldBe 0
        cache.misses shouldBe 1 // only the first attempt looked up
        bodies shouldBe 2
    }

    object Parent : StateSchema("parent") {
        val topic = key("topic", default = "")
        val found = key("found", default = "")
        val topics = key("topics", default = emptyList<String>())
        val all = key("all", default = emptyList<String>(), reducer = Reducer.append())
    }

    @Test
    fun `a cached subgraph node caches its child run's output, a hit runs no child run`() = runTest {
        val cache = InMemoryNodeCache()
        val calls = ArrayList<String>()
        val child = searchGraph(calls, id = "child", policy = CachePolicy(key = { it[S.query] }))
        val parent = graph("parent", Parent) {
            val research = subgraph("research", child, cache = CachePolicy(key = { it[Parent.topic] })) {
                input(Parent.topic, S.query)
                output(S.answer, Parent.found)
            }
            start(research)
        }
        val first = parent.events(stateOf(Parent.topic to "t"), RunOptions(cache = cache)).toList()
        EventInvariants.check(first)
        // The child's node stored under the child graph, the subgraph node under the parent.
        first.filterIsInstance<RunEvent.NodeCacheStored>().map { it.path } shouldBe
            listOf("research/search", "research")
        val second = parent.events(stateOf(Parent.topic to "t"), RunOptions(cache = cache)).toList()
        EventInvariants.check(second)
        second.filterIsInstance<RunEvent.NodeCacheHit>().map { it.path } shouldBe listOf("research")
        second.filterIsInstance<RunEvent.NodeStarted>().map { it.path } shouldBe listOf("research")
        (second.last() as RunEvent.RunCompleted).result.run {
            state[Parent.found] shouldBe "answer to t"
            children.containsKey("research") shouldBe false
        }
        calls shouldBe listOf("t")
        // The child graph's own entry serves the same child graph run directly.
        child.invoke(stateOf(S.query to "t"), RunOptions(cache = cache))
        calls shouldBe listOf("t")
    }

    @Test
    fun `a cached map node caches the writes of all its tasks in task order`() = runTest {
        val cache = InMemoryNodeCache()
        var tasks = 0
        val g = graph("fan", Parent) {
            val each =
                map("each", over = Parent.topics, cache = CachePolicy(key = { it[Parent.topics].joinToString() })) {
                    topic ->
                    tasks++
                    delay(if (topic == "a") 2.seconds else 1.seconds) // finish out of order
                    set(Parent.all, listOf(topic))
                }
            start(each)
        }
        val input = stateOf(Parent.topics to listOf("a", "b", "c"))
        g.invoke(input, RunOptions(cache = cache)).state[Parent.all] shouldBe listOf("a", "b", "c")
        val events = g.events(input, RunOptions(cache = cache)).toList()
        EventInvariants.check(events)
        events.filterIsInstance<RunEvent.NodeCacheHit>().single().path shouldBe "each"
        (events.last() as RunEvent.RunCompleted).result.state[Parent.all] shouldBe listOf("a", "b", "c")
        tasks shouldBe 3
    }
}
