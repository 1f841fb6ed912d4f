package dev.trellis.test.guide

import dev.langchain4j.data.message.UserMessage
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.chatNode
import dev.trellis.test.context.TrellisTestContext
import dev.trellis.test.junit.TrellisTest
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import org.junit.jupiter.api.Test

object Triage : StateSchema("triage") {
    val ticket = key("ticket", default = "")
    val category = key("category", default = "")
    val reply = key("reply", default = "")
}

fun triageGraph(model: dev.langchain4j.model.chat.ChatModel) = graph("triage", Triage) {
    val classify = chatNode("classify", model, Triage.category) {
        listOf(UserMessage.from("Classify as billing or tech: ${it[Triage.ticket]}"))
    }
    val reply = chatNode("reply", model, Triage.reply) {
        listOf(UserMessage.from("Reply to this ${it[Triage.category]} ticket: ${it[Triage.ticket]}"))
    }
    start(classify)
    classify then reply
}

@TrellisTest // a fresh store per test, virtual time, the timeline page of a failing test
class TriageGuideTest {
    @Test
    fun `a billing ticket is classified, then answered`(trellis: TrellisTestContext) {
        val model = ScriptedChatModel.builder()
            .whenPrompt("Classify", ScriptedAnswer.text("billing"))
            .whenPrompt("Reply", ScriptedAnswer.text("Your refund is on its way."))
            .build()

        trellis.run(triageGraph(model), stateOf(Triage.ticket to "I was charged twice"))

        trellis.trajectory()
            .assertNodes("classify", "reply")
            .assertStateAfter("classify", Triage.category, "billing")
            .assertFinalState(Triage.reply, "Your refund is on its way.")
    }
}
