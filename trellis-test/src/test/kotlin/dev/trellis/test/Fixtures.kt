package dev.trellis.test

import dev.langchain4j.agent.tool.P
import dev.langchain4j.agent.tool.Tool
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.ChatModel
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.chatNode
import java.util.concurrent.atomic.AtomicInteger

/** A small graph of the kit's tests: a model answers a question, a node counts the answer's words. */
object Qa : StateSchema("qa") {
    val question = key("question", default = "")
    val answer = key("answer", default = "")
    val words = key("words", default = 0)
}

fun qaGraph(model: ChatModel, system: String = "Answer briefly."): Graph = graph("qa", Qa) {
    val answer = chatNode("answer", model, Qa.answer) {
        listOf(SystemMessage.from(system), UserMessage.from("Question: ${it[Qa.question]}"))
    }
    val count = node("count") { set(Qa.words, get(Qa.answer).split(' ').count { w -> w.isNotBlank() }) }
    start(answer)
    answer then count
}

fun question(text: String) = stateOf(Qa.question to text)

fun agentInput(text: String) = stateOf(AgentState.messages to listOf(Message.User(text)))

/** A tool object whose calls are counted. */
class Weather {
    val calls = AtomicInteger()

    @Tool("Current temperature in a city, in °C")
    fun temperature(
        @P(name = "city", value = "the city") city: String,
    ): String {
        calls.incrementAndGet()
        return if (city == "Oslo") "-3" else "21"
    }
}
