package dev.trellis.functional

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.atomic.AtomicInteger

/** A graph called as a task of a workflow, and a workflow used as a node of a graph (`docs/functional.md`). */
private object Count : StateSchema("count") {
    val n = key<Int>("n", 0)
    val steps = key<Int>("steps", 0)
}

private object Doc : StateSchema("doc") {
    val draft = key<String>("draft")
    val outcome = key<String>("outcome", "")
    val notified = key<Boolean>("notified", false)
}

class CompositionTest : FunSpec({
    val graphRuns = AtomicInteger()
    val counter = graph("counter", Count) {
        val step = node("step") {
            graphRuns.incrementAndGet()
            set(Count.steps, get(Count.steps) + 1)
            set(Count.n, get(Count.n) * 2)
        }
        start(step)
        step.route(step, END) { if (it[Count.steps] < 3) step else END }
    }

    test("a graph called as a task: its final value is the task's recorded result, not run again on resume") {
        val store = InMemoryCheckpointStore()
        var crash = true
        val doubler = workflow<Int, Int>("doubler") { n ->
            val eight = graphTask("count", counter, stateOf(Count.n to n), Count.n)
            task("after") {
                if (crash) error("crash")
                eight + 1
            }
        }
        shouldThrow<IllegalStateException> { doubler.run(1, store, "g-1") }
        graphRuns.get() shouldBe 3
        crash = false
        doubler.resume("g-1", store) shouldBe 9
        graphRuns.get() shouldBe 3
    }

    test("a workflow as a node: its interrupt pauses the graph run, the graph's resume answers it") {
        val checks = AtomicInteger()
        val approval = workflow<String, String>("approval") { draft ->
            val checked = task("check") { checks.incrementAndGet().let { draft.trim() } }
            val answer = interrupt("Publish '$checked'?")
            task("publish") { if (answer == "yes") "published $checked" else "kept $checked" }
        }
        val store = InMemoryCheckpointStore()
        val flow = graph("doc", Doc) {
            val review = node("review", body = approval.node(store, Doc.outcome) { it[Doc.draft] })
            val notify = node("notify") { set(Doc.notified, true) }
            start(review)
            review then notify
            notify then END
        }
        val options = RunOptions(runId = "doc-1", checkpointing = Checkpointing(store))
        val paused = flow.invoke(stateOf(Doc.draft to " d "), options)
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().payload shouldBe "Publish 'd'?"
        val done = flow.resume("doc-1", options, "yes")
        done.status shouldBe Status.COMPLETED
        done.state[Doc.outcome] shouldBe "published d"
        done.state[Doc.notified] shouldBe true
        checks.get() shouldBe 1
    }
})
