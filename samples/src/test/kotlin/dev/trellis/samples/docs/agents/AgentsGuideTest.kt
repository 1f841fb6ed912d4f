package dev.trellis.samples.docs.agents

import dev.langchain4j.agent.tool.P
import dev.langchain4j.agent.tool.Tool
import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.ChatModel
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Conversation
import dev.trellis.langchain4j.Decision
import dev.trellis.langchain4j.InMemoryConversationMemory
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.ThreadState
import dev.trellis.langchain4j.TokenMeters
import dev.trellis.langchain4j.TokenPrice
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.VoteState
import dev.trellis.langchain4j.Worker
import dev.trellis.langchain4j.chatNode
import dev.trellis.langchain4j.reactAgent
import dev.trellis.langchain4j.routerNode
import dev.trellis.langchain4j.supervisor
import dev.trellis.langchain4j.threadAgent
import dev.trellis.langchain4j.voting
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.test.model.ScriptedAnswer.Companion.text
import dev.trellis.test.model.ScriptedAnswer.Companion.toolCall
import dev.trellis.test.model.ScriptedChatModel
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.doubles.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.math.absoluteValue

/** The Kotlin examples of `docs/agents.md`, as the guide shows them, run on scripted models and checked. */
class AgentsGuideTest {
    private val model: ChatModel = ScriptedChatModel.builder()
        .whenPrompt("Weather in Paris?", toolCall("temperature", """{"city": "Paris"}"""), text("21 C in Paris."))
        .whenPrompt("Why?", text("Because."))
        .build()

    object Qa : StateSchema("qa") {
        val question = key<String>("question")
        val answer = key("answer", "")
        val history = Conversation.key(this, "history")
    }

    val qa = graph("qa", Qa) {
        val ask = chatNode("ask", model, output = Qa.answer, conversation = Qa.history) { state ->
            listOf(SystemMessage.from("Be brief."), UserMessage.from(state[Qa.question]))
        }
        start(ask)
    }

    @Test
    fun `a chat node writes the answer and appends it to the conversation`(): Unit = runBlocking {
        val result = qa.invoke(stateOf(Qa.question to "Why?"))
        result.state[Qa.answer] shouldBe "Because."
        result.state[Qa.history].last() shouldBe Message.Ai("Because.")
    }

    class Weather {
        @Tool("Current temperature in a city")
        fun temperature(
            @P(name = "city", value = "the city") city: String,
        ): String = "21 C"
    }

    /** What the mail tool sends. */
    class Mailer {
        val sent = CopyOnWriteArrayList<String>()

        fun send(arguments: String): String {
            sent += arguments
            return "sent"
        }
    }

    private val mailer = Mailer()
    private val mailSpec = ToolSpecification.builder().name("sendMail").description("Sends a mail").build()

    @Test
    fun `tools come from annotated methods and from a specification with a function`() {
        val tools = Tools.builder()
            .add(Weather()) // @Tool methods, specifications by LangChain4j
            .add(mailSpec) { arguments -> mailer.send(arguments) } // a ToolSpecification and a ToolFunction
            .requireApproval("sendMail") // a person approves each call first
            .build()
        tools.specifications.map { it.name() } shouldContainExactly listOf("temperature", "sendMail")
    }

    @Test
    fun `a ReAct agent calls the tool, then answers`(): Unit = runBlocking {
        val agent = reactAgent(model, Tools.from(Weather()), maxSteps = 5, system = "Use the tools; be brief.")
        val result = agent.invoke(stateOf(AgentState.messages to listOf(Message.User("Weather in Paris?"))))
        println(result.state[AgentState.answer])
        result.state[AgentState.answer] shouldBe "21 C in Paris."
    }

    object Plan : StateSchema("plan") {
        val topic = key<String>("topic")
        val findings = key("findings", "")
    }

    @Test
    fun `a ReAct agent runs as a subgraph node`(): Unit = runBlocking {
        val agent = reactAgent(model, Tools.from(Weather()), maxSteps = 5)
        val plan = graph("plan", Plan) {
            val research = subgraph("agent", agent) {
                input { set(AgentState.messages, listOf(Message.User(parent[Plan.topic]))) }
                output(AgentState.answer, Plan.findings)
            }
            start(research)
        }
        plan.invoke(stateOf(Plan.topic to "Weather in Paris?")).state[Plan.findings] shouldBe "21 C in Paris."
    }

    object Support : StateSchema("support") {
        val ticket = key<String>("ticket")
        val route = key("route", "")
        val handled = key("handled", "")
    }

    @Test
    fun `a router node lets the model pick the next node`(): Unit = runBlocking {
        val model = ScriptedChatModel.of("billing")
        val graph = graph("support", Support) {
            val billing = node("billing") { set(Support.handled, "billing") }
            val tech = node("tech") { set(Support.handled, "tech") }
            val triage = routerNode("triage", model, Support.route, mapOf(billing to "refunds", tech to "bugs")) {
                listOf(UserMessage.from(it[Support.ticket]))
            }
            start(triage)
        }
        val result = graph.invoke(stateOf(Support.ticket to "Refund my order"))
        result.state[Support.route] shouldBe "billing"
        result.state[Support.handled] shouldBe "billing"
    }

    @Test
    fun `token meters charge every model call and a budget bounds them`(): Unit = runBlocking {
        val model = ScriptedChatModel.builder()
            .answer(toolCall("temperature", """{"city": "Oslo"}""").withUsage(1_000, 100))
            .answer(text("5 C.").withUsage(1_200, 50))
            .build()
        val tools = Tools.from(Weather())
        val input = stateOf(AgentState.messages to listOf(Message.User("Weather in Oslo?")))
        val meters = TokenMeters.builder().cost("usd", TokenPrice.perMillionTokens(input = 3.0, output = 15.0)).build()
        val agent = reactAgent(model, tools, maxSteps = 20, meters = meters)
        val options = RunOptions(budget = Budget().withMeter("tokens.output", 20_000.0).withMeter("usd", 0.50))
        val result = agent.invoke(input, options)
        println(result.meters) // {tokens.input=…, tokens.output=…, usd=…}
        result.meters["tokens.input"] shouldBe 2_200.0
        result.meters["tokens.output"] shouldBe 150.0
        (result.meters.getValue("usd") - (2_200 * 3.0 + 150 * 15.0) / 1_000_000).absoluteValue shouldBeLessThan 1e-12
    }

    class Search {
        @Tool("Searches the web")
        fun search(
            @P(name = "query", value = "what to look for") query: String,
        ): String = "facts about $query"
    }

    object Doc : StateSchema("doc") {
        val brief = key("brief", "")
        val text = key("text", "")
    }

    @Test
    fun `a supervisor delegates to a worker graph, then answers`(): Unit = runBlocking {
        val model = ScriptedChatModel.builder()
            .answer(toolCall("writer", """{"task": "bees"}"""), text("Bees make honey."))
            .build()
        val writerGraph = graph("writer", Doc) {
            val write = node("write") { set(Doc.text, "A paragraph on ${get(Doc.brief)}.") }
            start(write)
        }
        val researcher = Worker.agent("researcher", "finds facts on the web", reactAgent(model, Tools.from(Search())))
        val writer = Worker.of("writer", "writes from notes", writerGraph, input = Doc.brief, output = Doc.text)
        val team = supervisor(model, listOf(researcher, writer), maxSteps = 6)
        val result = team.invoke(stateOf(AgentState.messages to listOf(Message.User("Write about bees"))))
        result.status shouldBe Status.COMPLETED
        result.state[AgentState.answer] shouldBe "Bees make honey."
        result.state[AgentState.messages].toString() shouldContain "A paragraph on bees."
    }

    @Test
    fun `voting takes the majority of its models, or a judge's pick of samples`(): Unit = runBlocking {
        val gpt = ScriptedChatModel.of("Canberra")
        val claude = ScriptedChatModel.of("Canberra.")
        val llama = ScriptedChatModel.of("Sydney")
        val model = ScriptedChatModel.of("Canberra", "Sydney", "Canberra", "Melbourne", "Canberra")
        val judgeModel = ScriptedChatModel.of("[1]")
        val vote = voting(listOf(gpt, claude, llama)) // majority
        val samples = voting(List(5) { model }, Decision.judge(judgeModel)) // 5 samples, a judge picks
        val result = vote.invoke(stateOf(VoteState.messages to listOf(Message.User("Capital of Australia?"))))
        println(result.state[VoteState.answer])
        result.state[VoteState.answer] shouldBe "Canberra"
        val judged = samples.invoke(stateOf(VoteState.messages to listOf(Message.User("Capital of Australia?"))))
        judged.state[VoteState.winner] shouldBe 0
    }

    @Test
    fun `a thread agent remembers the thread across runs`(): Unit = runBlocking {
        val model = ScriptedChatModel.builder()
            .whenPrompt("I am Ann.", text("Hello Ann."))
            .whenPrompt("Who am I?") { request ->
                text(if (request.messages().toString().contains("I am Ann.")) "Ann." else "?")
            }
            .build()
        val tools = Tools.from(Weather())
        val memory = InMemoryConversationMemory()
        val chat = threadAgent(reactAgent(model, tools, system = "Be brief."), memory, window = 20)
        chat.invoke(stateOf(ThreadState.threadId to "ann", ThreadState.messages to listOf(Message.User("I am Ann."))))
        chat.invoke(stateOf(ThreadState.threadId to "ann", ThreadState.messages to listOf(Message.User("Who am I?"))))
        memory.load("ann").last() shouldBe Message.Ai("Ann.")
    }
}
