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

private object Ask : StateSchema("ask") {
    val topic = key<String>("topic")
    val draft = key<String>("draft", "")
    val verdict = key<String>("verdict", "")
    val final = key<String>("final", "")
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

    val prepared = AtomicInteger()
    val approvals = AtomicInteger()
    val asking = graph("asking", Ask) {
        val prepare = node("prepare") {
            prepared.incrementAndGet()
            set(Ask.draft, "draft on ${get(Ask.topic)}")
        }
        val approve = node("approve") {
            approvals.incrementAndGet()
            set(Ask.verdict, interrupt("Publish ${get(Ask.draft)}?"))
        }
        val confirm = node("confirm") {
            val sure = interrupt("Sure about '${get(Ask.verdict)}'?")
            set(Ask.final, "${get(Ask.draft)}: ${get(Ask.verdict)} ($sure)")
        }
        start(prepare)
        prepare then approve
        approve then confirm
        confirm then END
    }

    test("a graph task whose child run asks: the workflow pauses with its question, each answer resumes the child") {
        val store = InMemoryCheckpointStore()
        val before = AtomicInteger()
        val publisher = workflow<String, String>("publisher") { topic ->
            task("before") { before.incrementAndGet() }
            val final = graphTask("ask", asking, stateOf(Ask.topic to topic), Ask.final)
            task("after") { "$final!" }
        }
        val first = shouldThrow<WorkflowInterruptedException> { publisher.run("tides", store, "p-1") }
        first.payload shouldBe "Publish draft on tides?"
        first.position shouldBe 1
        // Resumed without an answer, it asks again and runs nothing.
        shouldThrow<WorkflowInterruptedException> { publisher.resume("p-1", store) }.payload shouldBe
            "Publish draft on tides?"
        approvals.get() shouldBe 1
        val second = shouldThrow<WorkflowInterruptedException> { publisher.resume("p-1", store, "yes") }
        second.payload shouldBe "Sure about 'yes'?"
        second.position shouldBe 1
        publisher.resume("p-1", store, "quite") shouldBe "draft on tides: yes (quite)!"
        before.get() shouldBe 1
        prepared.get() shouldBe 1 // the child's completed node never ran again
        approvals.get() shouldBe 2 // asked once, then ran again with its answer
        store.latest("p-1/ask@1")!!.status shouldBe "COMPLETED" // checkpointed in the workflow's store
        // Completed: the run returns its recorded output, the child is not touched.
        publisher.resume("p-1", store) shouldBe "draft on tides: yes (quite)!"
        shouldThrow<IllegalStateException> { publisher.resume("p-1", store, "again") }
    }

    test("a graph task whose child completed before the task's record: its final state is the result") {
        val store = InMemoryCheckpointStore()
        val options = RunOptions(runId = "c-1/count@0", checkpointing = Checkpointing(store))
        counter.invoke(stateOf(Count.n to 1), options).state[Count.n] shouldBe 8 // a crash after the child, say
        val runs = graphRuns.get()
        val doubler = workflow<Int, Int>("doubler") { n -> graphTask("count", counter, stateOf(Count.n to n), Count.n) }
        doubler.run(1, store, "c-1") shouldBe 8
        graphRuns.get() shouldBe runs
    }

    test("a workflow node whose graph task asks: the graph run pauses, the graph's resume answers") {
        val store = InMemoryCheckpointStore()
        val publisher = workflow<String, String>("publisher") { topic ->
            graphTask("ask", asking, stateOf(Ask.topic to topic), Ask.final)
        }
        val flow = graph("doc", Doc) {
            val review = node("review", body = publisher.node(store, Doc.outcome) { it[Doc.draft] })
            start(review)
            review then END
        }
        val options = RunOptions(runId = "doc-2", checkpointing = Checkpointing(store))
        val paused = flow.invoke(stateOf(Doc.draft to "moons"), options)
        paused.interrupts.single().payload shouldBe "Publish draft on moons?"
        val again = flow.resume("doc-2", options, "no")
        again.interrupts.single().payload shouldBe "Sure about 'no'?"
        flow.resume("doc-2", options, "yes").state[Doc.outcome] shouldBe "draft on moons: no (yes)"
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
