package dev.trellis.runtime.agent

import dev.trellis.graph.Graph
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.start
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

class AgentNodeTest {
    object Chat : StateSchema() {
        val user = key<String>("user")
        val reply = key("reply", default = "")
        val followUp = key("followUp", default = "")
    }

    /** Remembers every prompt it is given; its reply lists everything it remembers. */
    class MemoryAgent(private val failFirst: Boolean = false) : Agent {
        val history = mutableListOf("system: be brief")
        val running = AtomicInteger()
        val maxRunning = AtomicInteger()
        val calls = AtomicInteger()

        override suspend fun call(input: AgentInput, scope: AgentScope): String {
            val now = running.incrementAndGet()
            maxRunning.accumulateAndGet(now) { a, b -> maxOf(a, b) }
            try {
                history += input.prompt
                scope.token("thinking")
                delay(100.milliseconds)
                if (failFirst && calls.incrementAndGet() == 1) error("flaky model")
                return history.joinToString(" | ")
            } finally {
                running.decrementAndGet()
            }
        }

        override fun snapshot(): AgentSnapshot = AgentSnapshot(history.toList())

        override fun restore(snapshot: AgentSnapshot) {
            history.clear()
            @Suppress("UNCHECKED_CAST")
            history += snapshot.value as List<String>
        }
    }

    /** Offers sessions: each one is an independent copy, so calls may overlap. */
    class SessionAgent(
        private val history: List<String>,
        private val running: AtomicInteger = AtomicInteger(),
        val maxRunning: AtomicInteger = AtomicInteger(),
    ) : Agent {
        private val own = history.toMutableList()

        override suspend fun call(input: AgentInput, scope: AgentScope): String {
            val now = running.incrementAndGet()
            maxRunning.accumulateAndGet(now) { a, b -> maxOf(a, b) }
            try {
                own += input.prompt
                delay(100.milliseconds)
                return own.joinToString(" | ")
            } finally {
                running.decrementAndGet()
            }
        }

        override fun session(): Agent = SessionAgent(own.toList(), running, maxRunning)
    }

    private fun chatGraph(agent: Agent, retry: Retry? = null): Graph = graph("chat", Chat) {
        val ask = agentNode("ask", agent, Chat.reply, retry = retry) { "user ${it[Chat.user]}: hello" }
        val again = agentNode("again", agent, Chat.followUp) { "user ${it[Chat.user]}: who am I?" }
        start(ask)
        ask then again
    }

    private fun TestScope.options() = RunOptions(dispatcher = StandardTestDispatcher(testScheduler))

    @Test
    fun `concurrent runs sharing one agent each see only their own conversation`() = runTest {
        val agent = MemoryAgent()
        val chat = chatGraph(agent)
        val users = listOf("ada", "bob", "cy", "dee", "eve")
        val results = users.map { user ->
            async { chat.invoke(stateOf(Chat.user to user), options()) }
        }.awaitAll()
        results.zip(users).forEach { (result, user) ->
            result.status shouldBe Status.COMPLETED
            result.state[Chat.reply] shouldBe "system: be brief | user $user: hello"
            result.state[Chat.followUp] shouldBe "system: be brief | user $user: who am I?"
        }
        agent.history shouldContainExactly listOf("system: be brief")
        agent.maxRunning.get() shouldBe 1 // snapshot/restore agents are serialized per instance
    }

    @Test
    fun `without an agent node the same concurrent calls leak (the test can see a leak)`() = runTest {
        val agent = MemoryAgent()
        val scope = object : AgentScope {
            override suspend fun token(text: String) {}

            override suspend fun step(description: String) {}

            override suspend fun emit(payload: Any) {}
        }
        val replies = listOf("ada", "bob").map { user ->
            async { agent.call(AgentInput("user $user: hello", "r", "n", 1, 1), scope) }
        }.awaitAll()
        replies[0] shouldContain "bob"
    }

    @Test
    fun `session agents run concurrent calls in parallel and stay isolated`() = runTest {
        val agent = SessionAgent(listOf("system: be brief"))
        val chat = chatGraph(agent)
        val users = listOf("ada", "bob", "cy")
        val results = users.map { user -> async { chat.invoke(stateOf(Chat.user to user), options()) } }.awaitAll()
        results.zip(users).forEach { (result, user) ->
            result.state[Chat.reply] shouldBe "system: be brief | user $user: hello"
            result.state[Chat.followUp] shouldBe "system: be brief | user $user: who am I?"
        }
        agent.maxRunning.get() shouldBeGreaterThan 1
        agent.call(AgentInput("probe", "r", "n", 1, 1), NoScope) shouldBe "system: be brief | probe"
    }

    @Test
    fun `a failed attempt is rolled back before the retry`() = runTest {
        val agent = MemoryAgent(failFirst = true)
        val result = chatGraph(
            agent,
            retry = Retry.fixed(2, 10.milliseconds),
        ).invoke(stateOf(Chat.user to "ada"), options())
        result.node("ask").attempts shouldBe 2
        result.state[Chat.reply] shouldBe "system: be brief | user ada: hello"
        agent.history shouldContainExactly listOf("system: be brief")
    }

    @Test
    fun `a cancelled call is rolled back`() = runTest {
        val agent = MemoryAgent()
        val handle = chatGraph(agent).start(this, stateOf(Chat.user to "ada"), options())
        testScheduler.advanceTimeBy(50.milliseconds)
        handle.cancel()
        handle.await().status shouldBe Status.CANCELLED
        agent.history shouldContainExactly listOf("system: be brief")
    }

    @Test
    fun `streamed tokens surface as custom events of the agent node`() = runTest {
        val events = chatGraph(MemoryAgent()).events(stateOf(Chat.user to "ada"), options()).toList()
        val custom = events.filterIsInstance<RunEvent.Custom>()
        custom.map { it.nodeId } shouldContainExactly listOf("ask", "again")
        custom.map { it.payload } shouldContainExactly List(2) { AgentEvent.Token("MemoryAgent", "thinking") }
    }

    private object NoScope : AgentScope {
        override suspend fun token(text: String) {}

        override suspend fun step(description: String) {}

        override suspend fun emit(payload: Any) {}
    }
}
