@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.maps.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/** Failures of `docs/semantics.md` §6: what fails, what stays pending, what is kept. */
class FailureTest {
    object S : StateSchema("failure") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    class Boom(val node: String) : RuntimeException("boom in $node")

    private val thrown = HashMap<String, Boom>()

    private fun boom(node: String): Nothing = throw Boom(node).also { thrown[node] = it }

    private fun RunResult.statuses(): Map<String, Status> = nodes.mapValues { it.value.status }

    private fun chain(failing: String): Graph = graph("chain", S) {
        val ids = listOf("a", "b", "c")
        val refs = ids.map { id ->
            node(id) {
                delay(1)
                set(S.log, listOf(id))
                if (id == failing) boom(id)
            }
        }
        start(refs[0])
        refs[0] then refs[1]
        refs[1] then refs[2]
    }

    @ParameterizedTest
    @ValueSource(strings = ["a", "b", "c"])
    fun `a failure in a chain fails the run and leaves downstream pending`(failing: String) = runTest {
        val e = shouldThrow<GraphRunException> { chain(failing).invoke(options = virtualTime()) }
        e.cause shouldBeSameInstanceAs thrown.getValue(failing)
        e.result.status shouldBe Status.FAILED
        e.result.error shouldBeSameInstanceAs thrown.getValue(failing)
        e.result.errors shouldBe listOf(thrown.getValue(failing))
        val position = "abc".indexOf(failing)
        val expected = "abc".mapIndexed { k, id ->
            id.toString() to when {
                k < position -> Status.COMPLETED
                k == position -> Status.FAILED
                else -> Status.PENDING
            }
        }.toMap()
        e.result.statuses() shouldContainExactly expected
        e.result.node(failing).error shouldBeSameInstanceAs thrown.getValue(failing)
        // The failed execution's write is not applied.
        e.result.state[S.log] shouldBe "abc".take(position).map { it.toString() }

        val run = chain(failing).record(options = virtualTime())
        (run.events.last() as RunEvent.RunFailed).error shouldBeSameInstanceAs thrown.getValue(failing)
        run.all<RunEvent.NodeFailed>().single().nodeId shouldBe failing
    }

    private fun diamond(failing: String): Graph = graph("diamond", S) {
        val durations = mapOf("s" to 1L, "a" to 1L, "b" to 5L, "j" to 1L)
        val refs = durations.mapValues { (id, d) ->
            node(id) {
                delay(d)
                if (id == failing) boom(id)
                set(S.log, listOf(id))
            }
        }
        start(refs.getValue("s"))
        refs.getValue("s") then refs.getValue("a")
        refs.getValue("s") then refs.getValue("b")
        refs.getValue("a") then refs.getValue("j")
        refs.getValue("b") then refs.getValue("j")
    }

    @ParameterizedTest
    @ValueSource(strings = ["s", "a", "b", "j"])
    fun `a failure in a diamond leaves downstream pending and lets the parallel branch finish`(
        failing: String,
    ) = runTest {
        val run = diamond(failing).record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.error shouldBeSameInstanceAs thrown.getValue(failing)
        val expected = when (failing) {
            "s" -> mapOf("s" to Status.FAILED, "a" to Status.PENDING, "b" to Status.PENDING, "j" to Status.PENDING)
            "a" -> mapOf("s" to Status.COMPLETED, "a" to Status.FAILED, "b" to Status.COMPLETED, "j" to Status.PENDING)
            "b" -> mapOf("s" to Status.COMPLETED, "a" to Status.COMPLETED, "b" to Status.FAILED, "j" to Status.PENDING)
            else -> mapOf(
                "s" to Status.COMPLETED,
                "a" to Status.COMPLETED,
                "b" to Status.COMPLETED,
                "j" to Status.FAILED,
            )
        }
        run.result.statuses() shouldContainExactly expected
        run.result.state[S.log].toSet() shouldBe expected.filterValues { it == Status.COMPLETED }.keys
    }

    private fun parallel(failFast: Boolean): Graph = graph("parallel", S) {
        val s = node("s") { }
        val a = node("a") {
            delay(1)
            boom("a")
        }
        val b = node("b") {
            delay(10)
            set(S.log, listOf("b"))
        }
        val c = node("c") { set(S.log, listOf("c")) }
        start(s)
        s then a
        s then b
        b then c
        config { this.failFast = failFast }
    }

    @Test
    fun `graceful failure lets a running node finish and keeps its writes, but decides none of its edges`() = runTest {
        val run = parallel(failFast = false).record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.statuses() shouldContainExactly
            mapOf("s" to Status.COMPLETED, "a" to Status.FAILED, "b" to Status.COMPLETED, "c" to Status.PENDING)
        run.result.state[S.log] shouldBe listOf("b")
        run.all<RunEvent.EdgeTaken>().none { it.from == "b" } shouldBe true
        currentTime shouldBe 10
    }

    @Test
    fun `failFast cancels the running node and drops its writes`() = runTest {
        val run = parallel(failFast = true).record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.error shouldBeSameInstanceAs thrown.getValue("a")
        run.result.statuses() shouldContainExactly
            mapOf("s" to Status.COMPLETED, "a" to Status.FAILED, "b" to Status.CANCELLED, "c" to Status.PENDING)
        run.result.state[S.log] shouldBe emptyList()
        run.all<RunEvent.NodeCancelled>().map { it.nodeId } shouldBe listOf("b")
        currentTime shouldBe 1
    }

    @Test
    fun `failFast cancels siblings that were queued but not started yet, and their bodies never run`() = runTest {
        val ran = ArrayList<String>()
        val g = graph("queued", S) {
            val s = node("s") { }
            // Fails at once, without suspending: b and c are still queued behind it for a worker.
            val a = node("a") {
                ran += "a"
                boom("a")
            }
            val b = node("b") {
                ran += "b"
                set(S.log, listOf("b"))
            }
            val c = node("c") {
                ran += "c"
                set(S.log, listOf("c"))
            }
            start(s)
            s then a
            s then b
            s then c
            config { failFast = true }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        ran shouldBe listOf("a")
        run.result.statuses() shouldContainExactly
            mapOf("s" to Status.COMPLETED, "a" to Status.FAILED, "b" to Status.CANCELLED, "c" to Status.CANCELLED)
        run.all<RunEvent.NodeCancelled>().map { it.nodeId } shouldBe listOf("b", "c")
        run.result.state[S.log] shouldBe emptyList()
    }

    @Test
    fun `every failure is kept in order, the first is the run's error`() = runTest {
        val g = graph("two-failures", S) {
            val s = node("s") { }
            val a = node("a") {
                delay(1)
                boom("a")
            }
            val b = node("b") {
                delay(3)
                boom("b")
            }
            start(s)
            s then a
            s then b
        }
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        e.result.errors shouldBe listOf(thrown.getValue("a"), thrown.getValue("b"))
        e.cause shouldBeSameInstanceAs thrown.getValue("a")
        e.result.node("b").status shouldBe Status.FAILED
        e.result.node("b").error shouldBeSameInstanceAs thrown.getValue("b")
        e.message!!.contains("boom in a") shouldBe true
    }

    @Test
    fun `a selector that throws fails the node after its writes were merged`() = runTest {
        val g = graph("bad-route", S) {
            val a = node("a") { set(S.log, listOf("a")) }
            val b = node("b") { }
            start(a)
            a.route(b, END) { boom("route") }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.error shouldBeSameInstanceAs thrown.getValue("route")
        run.result.node("a").status shouldBe Status.FAILED
        run.result.node("b").status shouldBe Status.PENDING
        run.result.state[S.log] shouldBe listOf("a")
    }

    @Test
    fun `a route selecting an undeclared target fails the node`() = runTest {
        val g = graph("undeclared", S) {
            val a = node("a") { }
            val b = node("b") { }
            val c = node("c") { }
            start(a)
            a.route(b, END) { c }
            a.route(c, END) { END }
        }
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        e.result.node("a").status shouldBe Status.FAILED
        e.result.node("b").status shouldBe Status.PENDING
        e.result.node("c").status shouldBe Status.PENDING
        e.cause!!.message!!.contains("'c'") shouldBe true
    }
}
