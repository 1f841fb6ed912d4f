package dev.trellis.studio

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlin.time.Duration.Companion.milliseconds

/** A document: a topic, its draft, whether it was approved, its word count, long notes. */
object Doc : StateSchema("doc") {
    val topic = key("topic", default = "")
    val draft = key("draft", default = "")
    val approved = key("approved", default = false)
    val words = key("words", default = 0)
    val notes = key("notes", default = "")
}

/** A batch of items researched in parallel, one map task each. */
object Batch : StateSchema("batch") {
    val items = key("items", default = emptyList<String>())
    val results = key("results", default = emptyList<String>(), reducer = Reducer.append())
}

/** One task of [Batch]. */
object Task : StateSchema("task") {
    val item = key("item", default = "")
    val found = key("found", default = "")
    val summary = key("summary", default = "")
}

/** The graphs the studio's tests run. */
object TestGraphs {
    /** write → count: a run that completes. */
    val simple: Graph = graph("simple", Doc) {
        val write = node("write") {
            set(Doc.draft, "About ${get(Doc.topic)}")
            set(Doc.notes, "n".repeat(1_000))
        }
        val count = node("count") { set(Doc.words, get(Doc.draft).split(' ').size) }
        start(write)
        write then count
    }

    /** write → approve (interrupts for a yes/no) → publish. */
    val approval: Graph = graph("approval", Doc) {
        val write = node("write") { set(Doc.draft, "About ${get(Doc.topic)}") }
        val approve = node("approve") { set(Doc.approved, interrupt("Publish '${get(Doc.draft)}'? (yes/no)") == "yes") }
        val publish = node("publish") { set(Doc.words, if (get(Doc.approved)) 2 else 0) }
        start(write)
        write then approve
        approve then publish
    }

    private val task: Graph = graph("task", Task) {
        val search = node("search") { set(Task.found, "found ${get(Task.item)}") }
        val summarize = node("summarize") { set(Task.summary, get(Task.found).uppercase()) }
        val approve = node("approve") { }
        start(search)
        search then summarize
        summarize then approve
    }

    /** plan → research (a map of [task] over 4 items) → join. */
    val fanout: Graph = graph("fanout", Batch) {
        val plan = node("plan") { set(Batch.items, listOf("a", "b", "c", "d")) }
        val research = map("research", over = Batch.items, graph = task) {
            input { set(Task.item, item) }
            output { child -> set(Batch.results, listOf(child[Task.summary])) }
        }
        val join = node("join") { }
        start(plan)
        plan then research
        research then join
    }

    /**
     * plan → research (a map of [task] over 4 items) → check (a subgraph: [task] once) → join, or `redo` if the
     * research found nothing (it never runs: the graph shows it `not run`, under an `if` edge).
     */
    val composed: Graph = graph("composed", Batch) {
        val plan = node("plan") { set(Batch.items, listOf("a", "b", "c", "d")) }
        val research = map("research", over = Batch.items, graph = task) {
            input { set(Task.item, item) }
            output { child -> set(Batch.results, listOf(child[Task.summary])) }
        }
        val check = subgraph("check", task)
        val join = node("join") { }
        val redo = node("redo") { }
        start(plan)
        plan then research
        research then check
        check.then(join) { it[Batch.results].isNotEmpty() }
        check.then(redo) { it[Batch.results].isEmpty() }
    }

    /**
     * book (charges 0.25 usd, compensated by `cancel booking`) → pay (charges 0.5 usd, then fails): a failed run with
     * budget charges and a compensation.
     */
    val costly: Graph = graph("costly", Doc) {
        val book = node("book") {
            charge("usd", 0.25)
            set(Doc.draft, "booked")
        }
        val pay = node("pay") {
            charge("usd", 0.5)
            error("card declined")
        }
        book.compensate { }
        start(book)
        book then pay
    }

    /**
     * first → hang → last; with [hang], `hang` prints `hanging` and waits for ever (the worker of [CrashedWorker] is
     * killed there), else it completes.
     */
    fun crashy(hang: Boolean): Graph = graph("crashy", Doc) {
        val first = node("first") { set(Doc.draft, "first") }
        val stuck = node("hang") {
            if (hang) {
                println("hanging")
                System.out.flush()
                awaitCancellation()
            }
            set(Doc.words, 1)
        }
        val last = node("last") { set(Doc.approved, true) }
        start(first)
        first then stuck
        stuck then last
    }

    /** first → wait (until [gate] completes) → last. */
    fun gated(gate: CompletableDeferred<Unit>): Graph = graph("gated", Doc) {
        val first = node("first") { set(Doc.draft, "first") }
        val wait = node("wait") {
            gate.await()
            set(Doc.words, 1)
        }
        val last = node("last") { set(Doc.approved, true) }
        start(first)
        first then wait
        wait then last
    }

    /**
     * slow (3 s) → a write ⇄ review loop of six 5 ms executions: on a timeline of the whole run the loop is a sliver,
     * readable once zoomed.
     */
    val loop: Graph = graph("loop", Doc) {
        val slow = node("slow") {
            delay(3_000.milliseconds)
            set(Doc.topic, "loops")
        }
        val write = node("write") {
            delay(5.milliseconds)
            set(Doc.words, get(Doc.words) + 1)
        }
        val review = node("review") {
            delay(5.milliseconds)
            set(Doc.approved, get(Doc.words) >= 3)
        }
        start(slow)
        slow then write
        write then review
        review.then(write) { !it[Doc.approved] }
    }
}
