package dev.trellis.runtime.agent

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.util.WeakHashMap
import kotlin.time.Duration

/**
 * Declares a node [id] that calls [agent] with a prompt built from the state by [prompt] and writes the
 * reply to [output]; returns a handle for wiring edges.
 *
 * Every attempt of the node is isolated from every other call of the same agent instance, in this run
 * and in concurrent runs (see [Agent] for how): the agent starts from the state it had before and ends
 * with it. Tokens and steps the agent streams become custom events of the node ([AgentEvent]).
 * [onReply] may write more state from the reply (e.g. a counter or a verdict). [reads] and [writes] are the
 * node's slice (`docs/semantics.md` §12): the prompt reads the state through it, and [output] must be in [writes].
 *
 * ```kotlin
 * val write = agentNode("write", writer, output = Research.draft) { state ->
 *     "Write a report on ${state[Research.question]} from ${state[Research.notes]}"
 * }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.agentNode(
    id: String,
    agent: Agent,
    output: StateKey<String>,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    onReply: (NodeScope.(reply: String) -> Unit)? = null,
    reads: Set<StateKey<*>>? = null,
    writes: Set<StateKey<*>>? = null,
    prompt: (State) -> String,
): NodeRef = node(id, timeout, retry, description ?: "agent ${agent.name}", reads, writes) {
    val input = AgentInput(prompt(state), runId, nodeId, executionCount, attempt)
    val reply = callIsolated(agent, input, NodeAgentScope(this, agent.name))
    set(output, reply)
    onReply?.invoke(this, reply)
}

/**
 * Calls [agent] so that the call neither sees nor leaves conversation state of other calls: through a
 * fresh session when the agent offers one, else serialized on the instance with snapshot and restore.
 */
internal suspend fun callIsolated(agent: Agent, input: AgentInput, scope: AgentScope): String {
    val session = agent.session()
    if (session != null) return session.call(input, scope)
    return AgentLocks.of(agent).withLock {
        val snapshot = agent.snapshot()
        try {
            agent.call(input, scope)
        } finally {
            if (snapshot != null) withContext(NonCancellable) { agent.restore(snapshot) }
        }
    }
}

/**
 * One lock per agent instance, shared by every agent node and every run that uses it. Weak keys: an agent
 * no one uses any more is collected with its lock. Keys compare with the agent's `equals`, so agents
 * that declare themselves equal share a lock (more serialization, never less isolation).
 */
internal object AgentLocks {
    private val locks = WeakHashMap<Agent, Mutex>()

    fun of(agent: Agent): Mutex = synchronized(locks) { locks.getOrPut(agent) { Mutex() } }
}

private class NodeAgentScope(private val node: NodeScope, private val agent: String) : AgentScope {
    override suspend fun token(text: String) = node.emit(AgentEvent.Token(agent, text))

    override suspend fun step(description: String) = node.emit(AgentEvent.Step(agent, description))

    override suspend fun emit(payload: Any) = node.emit(payload)
}
