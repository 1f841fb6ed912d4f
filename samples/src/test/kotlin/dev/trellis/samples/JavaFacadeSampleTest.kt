package dev.trellis.samples

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.agent.AgentEvent
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.util.concurrent.CopyOnWriteArrayList

/** The Java sample's logic (real time: the facade runs on its own pools), with its outcome asserted. */
class JavaFacadeSampleTest {
    @Test
    fun `java sample fans out to a join once, retries the news search once, loops 3 times and is reviewed by a Java agent`() {
        val printed = CopyOnWriteArrayList<RunEvent>()
        val summary = JavaFacadeSample.run { printed += it }
        val result = summary.result

        result.status shouldBe Status.COMPLETED
        result.state[JavaFacadeSample.FINDINGS] shouldContainExactlyInAnyOrder
            listOf(
                "web: ${JavaFacadeSample.TOPIC}",
                "news: ${JavaFacadeSample.TOPIC}",
                "papers: ${JavaFacadeSample.TOPIC}",
            )
        result.state[JavaFacadeSample.ROUND] shouldBe JavaFacadeSample.ROUNDS
        result.state[JavaFacadeSample.DRAFT] shouldBe "3 findings, revision 1, revision 2, revision 3"
        result.node("revise").executions shouldBe 3
        result.node("search-news").attempts shouldBe 2
        result.node("search-web").attempts shouldBe 1
        result.node("join").executions shouldBe 1
        result.nodes.values.map { it.status }.toSet() shouldBe setOf(Status.COMPLETED)
        // the reviewer saw its system prompt and this run's prompt only, and both runs left it as it was
        result.state[JavaFacadeSample.VERDICT] shouldBe "accepted after 2 messages"
        JavaFacadeSample.REVIEWER.conversation() shouldContainExactly listOf("You review research drafts.")

        // the Flow.Publisher run: every event reached the consumer, in order, ending with the terminal one
        printed shouldContainExactly summary.streamedEvents
        (summary.streamedEvents.last() is RunEvent.RunCompleted) shouldBe true
        summary.streamedEvents.filterIsInstance<RunEvent.NodeRetrying>().map { it.nodeId } shouldContainExactly
            listOf("search-news")
        summary.streamedEvents.filterIsInstance<RunEvent.Custom>().map { it.payload } shouldContainExactly listOf(
            "planning searches for ${JavaFacadeSample.TOPIC}",
            AgentEvent.Step("Reviewer", "reviewing review"),
            AgentEvent.Token("Reviewer", "accepted"),
            AgentEvent.Token("Reviewer", "after"),
            AgentEvent.Token("Reviewer", "2"),
            AgentEvent.Token("Reviewer", "messages"),
        )
    }

    @Test
    fun `java sample runs from the CLI's sample registry`() {
        Samples.named("java") shouldBe JavaSample
        val events = CopyOnWriteArrayList<RunEvent>()
        val outcome = runBlocking { JavaSample.run(SampleContext()) { events += it } }
        outcome.result.status shouldBe Status.COMPLETED
        outcome.notes.size shouldBe 3
        (events.last() is RunEvent.RunCompleted) shouldBe true
    }
}
