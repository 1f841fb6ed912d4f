package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Status
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Interrupts are workflow Updates (docs/temporal.md, "Interrupts"): answered, validated, refused for unknown ids. */
class InterruptUpdateTest {
    object S : StateSchema("interrupts") {
        val answer = key("answer", default = "")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val approval: Graph = graph("approval", S) {
        val draft = node("draft") { set(S.log, listOf("draft")) }
        val approve = node("approve") {
            emit("asking")
            set(S.answer, interrupt("Publish the draft?"))
        }
        val publish = node("publish") { set(S.log, listOf("published: ${get(S.answer)}")) }
        start(draft)
        draft then approve
        approve then publish
    }

    private val review: Graph = graph("review", S) {
        val inner = subgraph("review", approval) {
            input(S.log, S.log)
            output(S.answer, S.answer)
        }
        start(inner)
    }

    private val twoSteps: Graph = graph("two-steps", S) {
        val draft = node("draft") { set(S.log, listOf("draft")) }
        val approve = node("approve") { set(S.answer, interrupt("Publish the draft?")) }
        val confirm = node("confirm") {
            set(S.log, listOf("confirmed: ${get(S.answer)}, ${interrupt("Sure?")}"))
        }
        start(draft)
        draft then approve
        approve then confirm
    }

    private val temporal = TemporalHarness(listOf(approval, review, twoSteps))

    @AfterEach
    fun tearDown() {
        temporal.close()
    }

    // Real time: the run waits for an answer in a workflow Update; the query is polled for a bounded while.
    private fun pending(run: TemporalRun): Map<String, String> {
        val deadline = System.nanoTime() + 60_000_000_000L
        while (System.nanoTime() < deadline) {
            val asked = run.interrupts()
            if (asked.isNotEmpty()) return asked
            Thread.sleep(20)
        }
        error("Run ${run.runId} asked nothing within 60 s; progress: ${run.progress()}")
    }

    @Test
    fun `an interrupt waits for its answer, then the node runs again with it`() {
        val run = temporal.runner.start(approval, runId = "approve-1")
        pending(run) shouldBe mapOf("approve" to "Publish the draft?")
        run.progress() shouldContain "\"interrupts\":{\"approve\":\"Publish the draft?\"}"

        run.answerBlocking("approve", "yes")
        val result = run.awaitBlocking()

        result.status shouldBe Status.COMPLETED
        result.state[S.answer] shouldBe "yes"
        result.state[S.log] shouldBe listOf("draft", "published: yes")
        result.node("approve").executions shouldBe 1
        temporal.executions("approve") shouldBe 2 // asked, then answered
        run.interrupts() shouldBe emptyMap()
    }

    @Test
    fun `an answer to an unknown interrupt id is refused with the pending ids, and the run goes on`() {
        val run = temporal.runner.start(approval, runId = "approve-unknown")
        pending(run)

        val error = assertThrows<IllegalArgumentException> { run.answerBlocking("aprove", "yes") }
        error.message!! shouldContain "Run 'approve-unknown' has no pending interrupt 'aprove'"
        error.message!! shouldContain "[approve]"
        run.interrupts() shouldBe mapOf("approve" to "Publish the draft?")

        run.answerBlocking("approve", "after a typo")
        run.awaitBlocking().state[S.answer] shouldBe "after a typo"
    }

    @Test
    fun `an interrupt inside a subgraph is answered by its path, from Kotlin`(): Unit = runBlocking {
        val run = temporal.runner.start(review, runId = "review-1")
        pending(run) shouldBe mapOf("review/approve" to "Publish the draft?")

        run.answer("review/approve", "from Kotlin")

        val result = run.await()
        result.status shouldBe Status.COMPLETED
        result.state[S.answer] shouldBe "from Kotlin"
    }

    @Test
    fun `an answered interrupt is no longer pending, and an ended run has none`() {
        val run = temporal.runner.start(twoSteps, runId = "approve-twice")
        pending(run) shouldBe mapOf("approve" to "Publish the draft?")
        run.answerBlocking("approve", "yes")
        awaitPending(run, "confirm")

        val again = assertThrows<IllegalArgumentException> { run.answerBlocking("approve", "again") }
        again.message!! shouldContain "no pending interrupt 'approve'; its pending interrupts are [confirm]"
        run.answerBlocking("confirm", "sure")
        run.awaitBlocking().state[S.log] shouldBe listOf("draft", "confirmed: yes, sure")

        val ended = assertThrows<IllegalStateException> { run.answerBlocking("confirm", "late") }
        ended.message!! shouldContain "Run 'approve-twice' is not running"
    }

    private fun awaitPending(run: TemporalRun, id: String) {
        val deadline = System.nanoTime() + 60_000_000_000L
        while (id !in run.interrupts() && System.nanoTime() < deadline) Thread.sleep(20)
        run.interrupts().keys shouldBe setOf(id)
    }
}
