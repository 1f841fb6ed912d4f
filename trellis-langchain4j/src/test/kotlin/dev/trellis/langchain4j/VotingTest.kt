package dev.trellis.langchain4j

import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.output.TokenUsage
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.builtins.serializer
import org.junit.jupiter.api.Test

object Report : StateSchema("report") {
    val topic = key("topic", "")
    val sections =
        key(
            "sections",
            ListSerializer(String.serializer()),
            List::class.java,
            false,
            emptyList<String>(),
            Reducer.append(),
        )
    val text = key("text", "")
}

class VotingTest {
    private fun ask(text: String) = stateOf(VoteState.messages to listOf(Message.User(text)))

    private fun voters(vararg answers: String) = answers.map { ScriptedChatModel(Turn.Text(it)) }

    @Test
    fun `the majority answer wins, answers compared without case, spaces or a final period`(): Unit = runBlocking {
        val models = voters("Sydney", "Canberra", "  canberra. ")
        val events = voting(models).events(ask("Capital of Australia?")).toList()
        val result = (events.last() as RunEvent.Terminal).result

        result.state[VoteState.answer] shouldBe "Canberra"
        result.state[VoteState.winner] shouldBe 1
        result.state[VoteState.candidates] shouldBe listOf("Sydney", "Canberra", "  canberra. ")
        events.filterIsInstance<RunEvent.NodeStarted>().map { it.path } shouldContainAll
            listOf("ballot", "vote", "vote[0]", "vote[1]", "vote[2]", "decide")
        models.forEach {
            (it.requests.single().messages().single() as UserMessage).singleText() shouldBe
                "Capital of Australia?"
        }
    }

    @Test
    fun `a tie goes to the tied answer given first in voter order`(): Unit = runBlocking {
        voting(voters("A", "B")).invoke(ask("?")).state[VoteState.winner] shouldBe 0
        val result = voting(voters("B", "A", "A", "B")).invoke(ask("?"))
        result.state[VoteState.answer] shouldBe "B"
        result.state[VoteState.winner] shouldBe 0
        voting(voters("C", "A", "B", "B", "A")).invoke(ask("?")).state[VoteState.winner] shouldBe 1
    }

    @Test
    fun `N samples of one model, a judge decides and its tokens are charged`(): Unit = runBlocking {
        val model =
            ScriptedChatModel(
                Turn.Text("short"),
                Turn.Text("long and right"),
                Turn.Text("short"),
                usage = TokenUsage(5, 1),
            )
        val judge = ScriptedChatModel(Turn.Text("The best is [2]."), usage = TokenUsage(50, 2))
        val vote = Voting.builder().samples(
            model,
            3,
        ).maxParallel(1).decision(Decision.judge(judge)).system("Be exact.").build()

        val result = vote.invoke(ask("Explain"))

        result.state[VoteState.winner] shouldBe 1
        result.state[VoteState.answer] shouldBe "long and right"
        val request = judge.requests.single().messages()
        (request.first() as SystemMessage).text() shouldBe "Be exact."
        (request.last() as UserMessage).singleText() shouldContain "[1]\nshort\n\n[2]\nlong and right\n\n[3]\nshort"
        result.meters shouldBe mapOf("tokens.input" to 65.0, "tokens.output" to 5.0)
    }

    @Test
    fun `a judge naming no candidate fails the decision`(): Unit = runBlocking {
        val error =
            shouldThrow<GraphRunException> {
                voting(voters("a", "b"), Decision.judge(ScriptedChatModel(Turn.Text("both are fine")))).invoke(ask("?"))
            }
        error.cause!!.message shouldContain "best of 2 candidates and got 'both are fine'"
    }

    @Test
    fun `a synthesizer merges partial answers, numbered, with the question`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Text("Merged."))
        val g =
            graph("report", Report) {
                val merge =
                    synthesizerNode("merge", model, Report.sections, Report.text) { "About ${it[Report.topic]}" }
                start(merge)
            }
        val result = g.invoke(stateOf(Report.topic to "bees", Report.sections to listOf("Bees fly.", "Bees sting.")))

        result.state[Report.text] shouldBe "Merged."
        val messages = model.requests.single().messages()
        (messages[0] as SystemMessage).text() shouldBe Synthesizer.DEFAULT_INSTRUCTIONS
        (messages[1] as UserMessage).singleText() shouldBe
            "Question: About bees\n\nPart 1:\nBees fly.\n\nPart 2:\nBees sting."

        val empty = shouldThrow<GraphRunException> { g.invoke(stateOf(Report.topic to "x")) }
        empty.cause!!.message shouldContain "got no partial answers"
    }
}
