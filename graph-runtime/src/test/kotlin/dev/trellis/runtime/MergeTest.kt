package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Test
import kotlin.time.Duration.Companion.milliseconds

/** Merging of `docs/semantics.md` §2–3: reducers, conflicts, buffered writes. */
class MergeTest {
    object S : StateSchema("merge") {
        val x = key("x", default = "")
        val y = key("y", default = "")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val ints = key("ints", default = emptyList<Int>(), reducer = Reducer.append())
        val total = key("total", default = 0, reducer = Reducer.sum())
    }

    @Test
    fun `parallel writers of a key without a reducer conflict`() = runTest {
        val g = graph("conflict", S) {
            val s = node("s") { }
            val a = node("a") {
                delay(1)
                set(S.x, "a")
            }
            val b = node("b", retry = Retry.fixed(3, 1.milliseconds)) {
                delay(2)
                set(S.y, "b")
                set(S.x, "b")
            }
            start(s)
            s then a
            s then b
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        val conflict = run.result.error.shouldBeInstanceOf<ConflictingUpdateException>()
        conflict.key shouldBe "x"
        conflict.nodeId shouldBe "b"
        conflict.otherNodeId shouldBe "a"
        conflict.message shouldContain "'x'"
        conflict.message shouldContain "'a'"
        conflict.message shouldContain "'b'"
        conflict.message shouldContain "reducer"
        run.result.node("b").status shouldBe Status.FAILED
        // A conflict is not retried, and none of the execution's writes is applied.
        run.result.node("b").attempts shouldBe 1
        run.all<RunEvent.NodeRetrying>() shouldBe emptyList()
        run.result.state[S.x] shouldBe "a"
        run.result.state[S.y] shouldBe ""

        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        e.cause.shouldBeInstanceOf<ConflictingUpdateException>()
    }

    @Test
    fun `writers ordered by an edge do not conflict`() = runTest {
        val g = graph("ordered", S) {
            val a = node("a") { set(S.x, "a") }
            val b = node("b") { set(S.x, get(S.x) + "b") }
            start(a)
            a then b
        }
        g.invoke(options = virtualTime()).state[S.x] shouldBe "ab"
    }

    @Test
    fun `a node writing a key twice keeps its last write and reads its own writes`() = runTest {
        val seen = ArrayList<Any>()
        val g = graph("twice", S) {
            val a = node("a") {
                set(S.x, "1")
                seen.add(get(S.x))
                set(S.x, "2")
                seen.add(get(S.x))
                seen.add(state[S.x])
                set(S.log, listOf("p"))
                set(S.log, listOf("q"))
                seen.add(get(S.log))
                set(S.total, 2)
                set(S.total, 3)
                seen.add(get(S.total))
            }
            start(a)
        }
        val result = g.invoke(stateOf(S.log to listOf("o")), virtualTime())
        result.status shouldBe Status.COMPLETED
        result.state[S.x] shouldBe "2"
        result.state[S.log] shouldBe listOf("o", "p", "q")
        result.state[S.total] shouldBe 5
        seen shouldBe listOf("1", "2", "", listOf("o", "p", "q"), 5)
    }

    @Test
    fun `reducers lose no update under real parallelism`(): Unit = runBlocking {
        val width = 32
        val g = graph("parallel-reduce", S) {
            val s = node("s") { }
            val j = node("j") { set(S.log, listOf("j")) }
            start(s)
            for (k in 0 until width) {
                val branch = node("b$k") {
                    yield()
                    set(S.ints, listOf(k))
                    set(S.total, k + 1)
                }
                s then branch
                branch then j
            }
        }
        val options = RunOptions(dispatcher = Dispatchers.Default)
        repeat(200) {
            val result = g.invoke(options = options)
            result.state[S.ints].sorted() shouldBe (0 until width).toList()
            result.state[S.total] shouldBe width * (width + 1) / 2
            result.state[S.log] shouldBe listOf("j")
        }
    }

    @Test
    fun `update on a reducer key fails with a message that says what to do`() = runTest {
        val g = graph("update-reducer", S) {
            val a = node("a") { update(S.log) { it + "x" } }
            start(a)
        }
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        val cause = e.cause.shouldBeInstanceOf<IllegalArgumentException>()
        cause.message shouldContain "'log'"
        cause.message shouldContain "set(log"
        e.result.node("a").status shouldBe Status.FAILED
    }

    object Picky : StateSchema("picky") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val total = key(
            "total",
            default = 0,
            reducer = Reducer {
                current,
                update,
                ->
                require(update >= 0) { "negative update $update" }
                current +
                    update
            },
        )
    }

    @Test
    fun `a reducer that throws fails the writing node and applies none of its writes`() = runTest {
        val g = graph("picky", Picky) {
            val good = node("good") {
                set(Picky.total, 5)
                set(Picky.log, listOf("good"))
            }
            val bad = node("bad") {
                set(Picky.log, listOf("bad"))
                set(Picky.total, -1)
            }
            val after = node("after") { set(Picky.log, listOf("after")) }
            start(good)
            good then bad
            bad then after
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        val error = run.result.error.shouldBeInstanceOf<IllegalArgumentException>()
        error.message shouldBe "negative update -1"
        run.result.node("bad").status shouldBe Status.FAILED
        run.result.node("after").status shouldBe Status.PENDING
        run.result.state[Picky.total] shouldBe 5
        run.result.state[Picky.log] shouldBe listOf("good")
        run.all<RunEvent.NodeFailed>().single().nodeId shouldBe "bad"
        (run.events.last() is RunEvent.RunFailed) shouldBe true
    }

    @Test
    fun `a failed attempt's writes are not applied`() = runTest {
        val g = graph("failed-attempt", S) {
            val a = node("a", retry = Retry.fixed(2, 5.milliseconds)) {
                set(S.total, 100)
                set(S.log, listOf("attempt $attempt"))
                set(S.x, "attempt $attempt")
                check(attempt == 2) { "first attempt fails" }
            }
            val b = node("b") {
                set(S.total, 1000)
                set(S.x, "b")
                error("b fails")
            }
            start(a)
            a then b
        }
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        e.result.node("a").attempts shouldBe 2
        e.result.state[S.total] shouldBe 100
        e.result.state[S.log] shouldBe listOf("attempt 2")
        e.result.state[S.x] shouldBe "attempt 2"
    }

    @Test
    fun `a retried attempt sees a fresh snapshot`() = runTest {
        val seen = ArrayList<String>()
        val g = graph("fresh", S) {
            val s = node("s") { }
            val a = node("a", retry = Retry.fixed(2, 10.milliseconds)) {
                seen.add("attempt $attempt saw '${get(S.x)}'")
                set(S.log, listOf("a$attempt"))
                check(attempt == 2)
            }
            val b = node("b") {
                delay(5)
                set(S.x, "b")
            }
            start(s)
            s then a
            s then b
        }
        val result = g.invoke(options = virtualTime())
        seen shouldBe listOf("attempt 1 saw ''", "attempt 2 saw 'b'")
        result.state[S.log] shouldBe listOf("a2")
    }
}
