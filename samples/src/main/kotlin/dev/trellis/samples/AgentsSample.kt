package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.agent.Agent
import dev.trellis.runtime.agent.AgentInput
import dev.trellis.runtime.agent.AgentScope
import dev.trellis.runtime.agent.AgentSnapshot
import dev.trellis.runtime.agent.agentNode
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlin.time.Duration.Companion.milliseconds

/** The state of the agents sample. */
internal object Conversation : StateSchema("conversation") {
    val user = key<String>("user")
    val greeting = key("greeting", default = "")
    val recall = key("recall", default = "")
}

/**
 * A chat agent with memory: it answers with everything it remembers. Shared by concurrent runs, it would
 * mix users up; agent nodes snapshot and restore its memory around each call (one call at a time).
 */
internal class MemoryChatAgent : Agent {
    override val name: String = "chat"
    val memory = mutableListOf("system: you are terse")

    override suspend fun call(input: AgentInput, scope: AgentScope): String {
        memory += input.prompt
        scope.step("reading ${memory.size} message(s)")
        delay(60.milliseconds)
        val users = memory.mapNotNull { Regex("I am (\\w+)").find(it)?.groupValues?.get(1) }.distinct()
        return "I know ${memory.size} message(s); users I know: $users"
    }

    override fun snapshot(): AgentSnapshot = AgentSnapshot(memory.toList())

    override fun restore(snapshot: AgentSnapshot) {
        memory.clear()
        @Suppress("UNCHECKED_CAST")
        memory += snapshot.value as List<String>
    }
}

/** One agent instance reused by three concurrent runs: each run sees only its own conversation. */
internal object AgentsSample : Sample {
    override val name: String = "agents"
    override val description: String = "one agent instance reused across 3 concurrent runs, isolated per execution"

    val users: List<String> = listOf("ada", "grace", "linus")

    fun graph(agent: Agent): Graph = graph("agents", Conversation) {
        val hello = agentNode("hello", agent, Conversation.greeting) { "I am ${it[Conversation.user]}. Hello!" }
        val recall = agentNode("recall", agent, Conversation.recall) { "Who am I, ${it[Conversation.user]}?" }
        start(hello)
        hello then recall
    }

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val agent = MemoryChatAgent()
        val chat = graph(agent)
        val results = coroutineScope {
            users.map {
                user ->
                async { runAndCollect(chat, stateOf(Conversation.user to user), context, onEvent = onEvent) }
            }.awaitAll()
        }
        return SampleOutcome(
            results,
            results.map { "${it.state[Conversation.user]}: ${it.state[Conversation.greeting]}" } +
                "agent memory after all runs: ${agent.memory}",
        )
    }
}
