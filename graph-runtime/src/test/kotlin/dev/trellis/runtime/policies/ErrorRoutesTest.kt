package dev.trellis.runtime.policies

import dev.trellis.graph.Edge
import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskFailure
import dev.trellis.graph.graph
import dev.trellis.runtime.EventInvariants
import dev.trellis.runtime.NodeTimeoutException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.record
import dev.trellis.runtime.start
import dev.trellis.runtime.virtualTime
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Error routes, `docs/semantics.md` §13.3. */
class ErrorRoutesTest {
    object S : StateSchema("errors") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val error = key<NodeError?>("error", default = null)
        val items = key("items", default = listOf(1, 2, 3))
    }

    object Child : StateSchema("child") {
        val n = key("n", default = 0)
    }

    @Test
    fun `retries run first, then the failure goes to the handler with the error in its key`() = runTest {
        val attempts = AtomicInteger()
        val g = graph("route", S) {
            val search = node("search", retry = Retry.fixed(3, 10.milliseconds)) {
                attempts.incrementAndGet()
                set(S.log, listOf("never merged"))
                throw IOException("search is down")
            }
            val fallback = node("fallback") {
                val error = get(S.error)!!
                set(S.log, listOf("fallback after ${error.node}: ${error.message} (${error.attempts} attempts)"))
            }
            val write = node("write") { set(S.log, listOf("write")) }
            start(search)
            search then write
            search.onFailure(fallback, error = S.error)
            fallback then write
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.errors.shouldBeEmpty()
        attempts.get() shouldBe 3
        run.result.state[S.error] shouldBe NodeError("search", IOException::class.java.name, "search is down", 3)
        run.result.state[S.log] shouldContainExactly
            listOf("fallback after search: search is down (3 attempts)", "write")
        run.result.node("search").status shouldBe Status.FAILED
        run.all<RunEvent.NodeRetrying>().size shouldBe 2
        val failed = run.all<RunEvent.NodeFailed>().single()
        failed.routedTo shouldBe "fallback"
        failed.attempts shouldBe 3
        failed.error.shouldBeInstanceOf<IOException>()
        val edge = run.indexOf { it is RunEvent.EdgeTaken && it.from == "search" }
        edge shouldBe run.events.indexOf(failed) + 1
        (run.events[edge] as RunEvent.EdgeTaken).to shouldBe "fallback"
    }

    @Test
    fun `a timed-out attempt is a failure like any other`() = runTest {
        val g = graph("timeout", S) {
            val slow = node("slow", timeout = 1.seconds, retry = Retry.fixed(2, 10.milliseconds)) { delay(5.seconds) }
            val fallback = node("fallback") { set(S.log, listOf("fallback: ${get(S.error)?.type}")) }
            start(slow)
            slow.onFailure(fallback, error = S.error)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("fallback: ${NodeTimeoutException::class.java.name}")
        run.result.state[S.error]!!.attempts shouldBe 2
    }

    @Test
    fun `a node without a route still fails the run, and the handler's own failure is not routed`() = runTest {
        val g = graph("unrouted", S) {
            val a = node("a") { throw IllegalStateException("a broke") }
            val handler = node("handler") { throw IllegalStateException("handler broke too") }
            start(a)
            config { defaultOnFailure(handler, error = S.error) }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.error!!.message shouldBe "handler broke too"
        run.result.state[S.error]!!.message shouldBe "a broke"
        run.all<RunEvent.NodeFailed>().map { it.nodeId to it.routedTo } shouldContainExactly
            listOf("a" to "handler", "handler" to null)
    }

    @Test
    fun `the graph-wide default handler takes every node without a route of its own`() = runTest {
        val g = graph("default", S) {
            val a = node("a") { throw IOException("a") }
            val b = node("b") { throw IOException("b") }
            val own = node("own") { set(S.log, listOf("own: ${get(S.error)?.node}")) }
            val handler = node("handler") { set(S.log, listOf("handler: ${get(S.error)?.node}")) }
            start(a)
            a.onFailure(own, error = S.error)
            own then b
            config { defaultOnFailure(handler, error = S.error) }
        }
        g.edges.filterIsInstance<Edge.OnFailure>().map { it.from to it.to } shouldContainExactly
            listOf("a" to "own", "b" to "handler", "own" to "handler")
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("own: a", "handler: b")
    }

    @Test
    fun `cancellation is never routed`() = runTest {
        val running = CompletableDeferred<Unit>()
        val handled = AtomicInteger()
        val g = graph("cancel", S) {
            val a = node("a") {
                running.complete(Unit)
                awaitCancellation()
            }
            val handler = node("handler") { handled.incrementAndGet() }
            start(a)
            a.onFailure(handler)
        }
        val handle = g.start(this, options = virtualTime())
        running.await()
        handle.cancel()
        handle.await().status shouldBe Status.CANCELLED
        handled.get() shouldBe 0

        val own = graph("own-cancellation", S) {
            val a = node("a") { throw CancellationException("a node's own cancellation") }
            val handler = node("handler") { handled.incrementAndGet() }
            start(a)
            a.onFailure(handler)
        }
        val run = own.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.error.shouldBeInstanceOf<CancellationException>()
        handled.get() shouldBe 0
    }

    @Test
    fun `a failing subgraph node and a failing map node route like any node`() = runTest {
        val child = graph("child", Child) {
            val boom = node("boom") { throw IOException("child broke") }
            start(boom)
        }
        val g = graph("composite", S) {
            val sub = subgraph("sub", child, retry = Retry.fixed(2, 10.milliseconds))
            val each = map("each", over = S.items, onTaskFailure = TaskFailure.FAIL_FAST) { item ->
                if (item == 2) throw IOException("task $item broke")
                set(S.log, listOf("task $item"))
            }
            val subFailed = node("subFailed") { set(S.log, listOf("sub: ${get(S.error)?.message}")) }
            val mapFailed = node("mapFailed") { set(S.log, listOf("map: ${get(S.error)?.message}")) }
            start(sub)
            sub.onFailure(subFailed, error = S.error)
            subFailed then each
            each.onFailure(mapFailed, error = S.error)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("sub: child broke", "map: task 2 broke")
        run.result.node("sub").status shouldBe Status.FAILED
        run.result.node("each").status shouldBe Status.FAILED
        val routed = run.all<RunEvent.NodeFailed>().filter { it.routedTo != null }.map { it.path to it.routedTo }
        routed shouldContainExactly listOf("sub" to "subFailed", "each" to "mapFailed")
    }

    @Test
    fun `inside a child run the child graph's own routes apply first`() = runTest {
        val child = graph("child", Child) {
            val boom = node("boom") { throw IOException("child broke") }
            val recover = node("recover") { set(Child.n, 7) }
            start(boom)
            boom.onFailure(recover)
        }
        val g = graph("parent", S) {
            val sub = subgraph("sub", child) { output { c -> set(S.log, listOf("n=${c[Child.n]}")) } }
            val handler = node("handler") { set(S.log, listOf("handler")) }
            start(sub)
            sub.onFailure(handler)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("n=7")
        run.all<RunEvent.NodeFailed>().single().let {
            it.path shouldBe "sub/boom"
            it.routedTo shouldBe "sub/recover"
        }
        run.all<RunEvent.EdgeTaken>().map { it.from to it.to } shouldContainExactly
            listOf("sub/boom" to "sub/recover")
    }

    @Test
    fun `build refuses routes to END, to the node itself, twice, or to an unknown default handler`() {
        val other = object : StateSchema("other") {
            val error = key<NodeError?>("error", default = null)
        }
        val error = shouldThrow<GraphValidationException> {
            graph("bad", S) {
                val a = node("a") { }
                val b = node("b") { }
                val c = node("c") { }
                start(a)
                a then b
                a.onFailure(END)
                b.onFailure(b)
                c.onFailure(a)
                c.onFailure(b)
                a then c
                b.onFailure(a, error = other.error)
            }
        }
        error.message shouldContain "Node 'a' routes its failures to END"
        error.message shouldContain "Node 'b' routes its failures to itself; give it a retry policy instead"
        error.message shouldContain "Node 'c' declares onFailure 2 times"
        error.message shouldContain "key 'error' of schema 'other'"
        shouldThrow<GraphValidationException> {
            graph("bad-default", S) {
                val a = node("a") { }
                start(a)
                config { defaultOnFailure(dev.trellis.graph.NodeRef.of("nope")) }
            }
        }.message shouldContain "config: defaultOnFailure names 'nope', which is not a node of this graph"
    }

    @Test
    fun `Mermaid draws an error route`() {
        val g = graph("mermaid", S) {
            val a = node("a") { }
            val b = node("b") { }
            start(a)
            a.onFailure(b)
        }
        g.toMermaid() shouldContain "n0 -. on failure .-> n1"
        g.toMermaid() shouldContain "n0 --> __end__"
    }

    @Test
    fun `routed failures keep the pairing rules in many timings`() = runTest {
        // Parallel branches, some failing after retries and routed; a run of each timing passes the pairing rules.
        for (seed in 0 until 20) {
            val random = kotlin.random.Random(seed)
            val g = graph("parallel", S) {
                val split = node("split") { }
                val handler = node("handler") { set(S.log, listOf("handled")) }
                start(split)
                for (i in 0 until 4) {
                    val fails = random.nextBoolean()
                    val d = random.nextLong(0, 30).milliseconds
                    val branch = node("b$i", retry = Retry.fixed(2, d)) {
                        delay(d)
                        if (fails) throw IOException("b$i")
                        set(S.log, listOf("b$i"))
                    }
                    split then branch
                    branch.onFailure(handler)
                }
            }
            val events = g.record(options = virtualTime()).events
            EventInvariants.check(events)
            (events.last() as RunEvent.RunCompleted).result.errors.shouldBeEmpty()
        }
    }
}
