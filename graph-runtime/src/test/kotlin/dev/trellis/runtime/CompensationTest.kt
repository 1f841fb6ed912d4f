package dev.trellis.runtime

import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.Collections

/** Compensation, `docs/semantics.md` §13.6. */
class CompensationTest {
    object Trip : StateSchema("trip") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val booked = key("booked", default = 0)
        val hotel = key("hotel", default = "")
    }

    object Plan : StateSchema("plan") {
        val items = key("items", default = listOf(1, 2, 3))
    }

    private val undone = Collections.synchronizedList(ArrayList<String>())

    @Test
    fun `a failed run compensates its completed executions in reverse completion order, with the state after each`() =
        runTest {
            val g = graph("trip", Trip) {
                val book = node("book") { update(Trip.booked) { it + 1 } }
                val hotel = node("hotel") { set(Trip.hotel, "h${get(Trip.booked)}") }
                val plain = node("plain") { set(Trip.log, listOf("plain")) }
                val pay = node("pay") { error("card declined") }
                book.compensate { state -> undone += "book@${state[Trip.booked]}/${state[Trip.hotel]}" }
                hotel.compensate { state -> undone += "hotel@${state[Trip.booked]}/${state[Trip.hotel]}" }
                start(book)
                book then hotel
                hotel.route(book, plain) { if (it[Trip.booked] < 2) book else plain }
                plain then pay
            }
            val run = g.record()
            val result = run.result
            result.status shouldBe Status.FAILED
            result.error!!.message shouldBe "card declined"
            // Completion order: book#1, hotel#1, book#2, hotel#2; reversed, each seeing the state right after it.
            undone shouldContainExactly listOf("hotel@2/h2", "book@2/h1", "hotel@1/h1", "book@1/")
            result.compensations.map { "${it.path}#${it.execution}:${it.status}" } shouldContainExactly
                listOf("hotel#2:COMPLETED", "book#2:COMPLETED", "hotel#1:COMPLETED", "book#1:COMPLETED")
            // The compensations come after every execution ended, before the terminal event.
            val firstCompensating = run.indexOf { it is RunEvent.NodeCompensating }
            run.indexOf { it is RunEvent.NodeFailed } shouldBe firstCompensating - 1
            run.all<RunEvent.NodeCompensated>().size shouldBe 4
            result.state[Trip.booked] shouldBe 2 // compensations write nothing
        }

    @Test
    fun `a run that completes, or whose nodes declare no compensation, compensates nothing`() = runTest {
        val completes = graph("ok", Trip) {
            val book = node("book") { update(Trip.booked) { it + 1 } }
            book.compensate { undone += "book" }
            start(book)
        }
        val ok = completes.record()
        ok.result.status shouldBe Status.COMPLETED
        ok.result.compensations.shouldBeEmpty()
        val none = graph("none", Trip) {
            val book = node("book") { update(Trip.booked) { it + 1 } }
            val fail = node("fail") { error("boom") }
            start(book)
            book then fail
        }
        val failed = none.record()
        failed.result.status shouldBe Status.FAILED
        failed.result.compensations.shouldBeEmpty()
        failed.all<RunEvent.NodeCompensating>().shouldBeEmpty()
        undone.shouldBeEmpty()
    }

    @Test
    fun `a failing compensation is listed and suppressed on the run's error, and the others still run`() = runTest {
        val boom = IllegalStateException("refund service down")
        val g = graph("refund", Trip) {
            val a = node("a") { set(Trip.log, listOf("a")) }
            val b = node("b") { set(Trip.log, listOf("b")) }
            val c = node("c") { throw IllegalArgumentException("original") }
            a.compensate { undone += "a" }
            b.compensate { throw boom }
            start(a)
            a then b
            b then c
        }
        val run = g.record()
        val result = run.result
        result.status shouldBe Status.FAILED
        result.error!!.message shouldBe "original"
        result.errors.size shouldBe 1
        result.error!!.suppressed.toList() shouldContainExactly listOf(boom)
        undone shouldContainExactly listOf("a")
        result.compensations.map { it.status } shouldContainExactly listOf(Status.FAILED, Status.COMPLETED)
        result.compensations[0].error shouldBeSameInstanceAs boom
        run.all<RunEvent.NodeCompensationFailed>().single().error shouldBeSameInstanceAs boom
    }

    @Test
    fun `graceful failure compensates what completes after the failure, and the view follows the read slice`() =
        runTest {
            val g = graph("graceful", Trip) {
                val a = node("a") { set(Trip.log, listOf("a")) }
                val slow = node("slow", reads = setOf(Trip.booked)) {
                    delay(100)
                    update(Trip.booked) { it + 10 }
                }
                val fails = node("fails") {
                    delay(10)
                    error("fails early")
                }
                a.compensate { undone += "a" }
                slow.compensate { state ->
                    undone += "slow@${state[Trip.booked]}"
                    undone += runCatching { state[Trip.log] }.exceptionOrNull()!!.javaClass.simpleName
                }
                start(a)
                a then slow
                a then fails
            }
            val result = g.record().result
            result.status shouldBe Status.FAILED
            undone shouldContainExactly listOf("slow@10", "SliceViolationException", "a")
        }

    @Test
    fun `a cancelled run compensates only when asked`() = runTest {
        for (asked in listOf(false, true)) {
            undone.clear()
            val started = CompletableDeferred<Unit>()
            val g = graph("cancel", Trip) {
                val a = node("a") { set(Trip.log, listOf("a")) }
                val wait = node("wait") {
                    started.complete(Unit)
                    awaitCancellation()
                }
                a.compensate { undone += "a" }
                start(a)
                a then wait
            }
            val job = launch { g.invoke(options = RunOptions(compensateOnCancel = asked)) }
            started.await()
            job.cancelAndJoin()
            if (asked) undone shouldContainExactly listOf("a") else undone.shouldBeEmpty()
        }
    }

    @Test
    fun `compensations of child runs and map tasks join the parent's list, in task order`() = runTest {
        val child = graph("child", Trip) {
            val book = node("book") { update(Trip.booked) { it + 1 } }
            book.compensate { state -> undone += "child.book@${state[Trip.booked]}" }
            start(book)
        }
        val g = graph("parent", Plan) {
            val sub = subgraph("sub", child)
            val trips = map("trips", over = Plan.items, graph = child, maxConcurrency = 3) {
                input { set(Trip.booked, item * 10) }
            }
            val fail = node("fail") { error("late") }
            sub.compensate { undone += "sub" }
            start(sub)
            sub then trips
            trips then fail
        }
        val result = g.record().result
        result.status shouldBe Status.FAILED
        undone shouldContainExactly listOf(
            "child.book@31",
            "child.book@21",
            "child.book@11",
            "sub",
            "child.book@1",
        )
        result.compensations.map { it.path } shouldContainExactly
            listOf("trips[2]/book", "trips[1]/book", "trips[0]/book", "sub", "sub/book")
    }

    @Test
    fun `build names a compensation of an unknown node and a node with two`() {
        val e = shouldThrow<GraphValidationException> {
            graph("bad", Trip) {
                val a = node("a") {}
                a.compensate { }
                a.compensate { }
                dev.trellis.graph.NodeRef.of("ghost").compensate { }
                start(a)
            }
        }
        e.message shouldContain "'ghost' is not a node of this graph"
        e.message shouldContain "node 'a' has two compensations"
    }
}
