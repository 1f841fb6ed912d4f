package dev.trellis.langchain4j

import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.trellis.graph.Graph
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.invoke
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import kotlin.time.Duration

object Support : StateSchema("support") {
    val ticket = key<String>("ticket")
    val route = key("route", "")
    val handledBy = key("handledBy", "")
}

class RouterNodeTest {
    private fun support(model: ScriptedChatModel, retry: Retry? = null): Graph = graph("support", Support) {
        val billing = node("billing") { set(Support.handledBy, "billing") }
        val tech = node("tech") { set(Support.handledBy, "tech") }
        val triage =
            routerNode(
                "triage",
                model,
                Support.route,
                mapOf(billing to "invoices, refunds", tech to "bugs"),
                retry = retry,
            ) {
                listOf(UserMessage.from(it[Support.ticket]))
            }
        start(triage)
    }

    @Test
    fun `the model's choice runs that node and is written to the choice key`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Text("\"Tech.\""))
        val result = support(model).invoke(stateOf(Support.ticket to "The app crashes"))
        result.state[Support.handledBy] shouldBe "tech"
        result.state[Support.route] shouldBe "tech"
        val system = model.requests.single().messages().first() as SystemMessage
        system.text() shouldContain "- billing: invoices, refunds\n- tech: bugs"
    }

    @Test
    fun `an answer naming no route is asked again, then fails naming the routes`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Text("I would say billing, it is about a refund"), Turn.Text("no idea"))
        support(model).invoke(stateOf(Support.ticket to "refund?")).state[Support.handledBy] shouldBe "billing"

        val confused = ScriptedChatModel(Turn.Text("billing or tech"), Turn.Text("no idea"))
        val error =
            shouldThrow<GraphRunException> {
                support(confused, Retry.fixed(2, Duration.ZERO)).invoke(stateOf(Support.ticket to "?"))
            }
        error.cause!!.message shouldBe
            "Router node 'triage' got the answer 'no idea', which names none of its routes [billing, tech]; give the " +
            "node a retry policy, or make the prompt ask for one name only."
        confused.requests.size shouldBe 2
    }
}
