package dev.trellis.test

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.reactAgent
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.events
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import dev.trellis.test.trajectory.Trajectory
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.opentest4j.AssertionFailedError

object Loop : StateSchema("loop") {
    val drafts = key("drafts", default = 0)
    val log = key("log", default = "")
}

/** draft ⇄ review until three drafts, then publish; check and notify in parallel after publish. */
val loopGraph = graph("loop", Loop) {
    val draft = node("draft") { update(Loop.drafts) { it + 1 } }
    val review = node("review") {}
    val publish = node("publish") { set(Loop.log, "published ${get(Loop.drafts)}") }
    val check = node("check") {}
    val notify = node("notify") {}
    start(draft)
    draft then review
    review.route(draft, publish) { if (it[Loop.drafts] < 3) draft else publish }
    publish then check
    publish then notify
}

class TrajectoryTest {
    @Test
    fun `node executions match exactly, in order, in any order, and by count`() = runTest {
        val trajectory = Trajectory.of(loopGraph.events(Loop.initialState()).toList())
        trajectory.nodes.take(7) shouldContainExactly
            listOf("draft", "review", "draft", "review", "draft", "review", "publish")
        trajectory
            .assertNodesInOrder("draft", "draft", "publish", "notify")
            .assertNodesInAnyOrder(
                "notify",
                "check",
                "publish",
                "review",
                "review",
                "review",
                "draft",
                "draft",
                "draft",
            )
            .assertNodeCount("draft", 3)
            .assertFinalState(Loop.log, "published 3")
    }

    @Test
    fun `a mismatch shows expected and actual lists and their diff`() = runTest {
        val trajectory = Trajectory.of(loopGraph.events(Loop.initialState()).toList())
        val error = shouldThrow<AssertionFailedError> { trajectory.assertNodesInOrder("draft", "publish", "draft") }
        error.message shouldContain "Node executions differ (in this order, others allowed between)."
        error.message shouldContain "Expected: [draft, publish, draft]"
        error.message shouldContain "Actual:   [draft, review, draft, review, draft, review, publish"
        error.message shouldContain "Diff (- expected, + actual):"
        shouldThrow<AssertionFailedError> { trajectory.assertNodeCount("review", 2) }.message shouldContain
            "Node 'review' ran 3 time(s), expected 2."
        shouldThrow<AssertionFailedError> { trajectory.assertFinalState(Loop.drafts, 2) }.message shouldBe
            "Final state 'drafts' is 3, expected 2."
    }

    @Test
    fun `tool calls come from the tool nodes' steps`() = runTest {
        val model = ScriptedChatModel.builder().answer(
            ScriptedAnswer.toolCalls(
                ScriptedAnswer.call("temperature", """{"city":"Oslo"}"""),
                ScriptedAnswer.call("temperature", """{"city":"Rome"}"""),
            ),
            ScriptedAnswer.text("done"),
        ).build()
        val trajectory = Trajectory.of(reactAgent(model, Tools.from(Weather())).events(agentInput("?")).toList())
        trajectory.assertNodes("model", "tools", "model")
            .assertToolCalls("temperature", "temperature")
            .assertToolCallCount("temperature", 2)
        trajectory.toolCallsWithArguments shouldContainExactly
            listOf("temperature({\"city\":\"Oslo\"})", "temperature({\"city\":\"Rome\"})")
        shouldThrow<AssertionFailedError> { trajectory.assertToolCallsInAnyOrder("search") }.message shouldContain
            "Tool calls differ (in any order)."
    }

    @Test
    fun `the state after a node comes from the run's checkpoints`() = runTest {
        val store = InMemoryCheckpointStore()
        val events = loopGraph.events(Loop.initialState(), RunOptions(checkpointing = Checkpointing(store))).toList()
        val trajectory = Trajectory.of(events, loopGraph, store)
        trajectory.assertStateAfter("draft", 1, Loop.drafts, 1)
            .assertStateAfter("draft", 2, Loop.drafts, 2)
            .assertStateAfter("publish", Loop.log, "published 3")
        shouldThrow<AssertionFailedError> { trajectory.stateAfter("draft", 4) }.message shouldContain
            "Node 'draft' has no execution 4 in this run; its executions: 3"

        val stored = Trajectory.fromStore(loopGraph, store, events.first().runId)
        stored.assertNodeCount("draft", 3).assertNodesInOrder("draft", "review", "publish")
        shouldThrow<IllegalStateException> { stored.toolCalls }.message shouldContain "has no tool calls"
        shouldThrow<IllegalStateException> { Trajectory.of(events).stateAfter("draft") }.message shouldContain
            "needs the run's checkpoints"
    }
}
