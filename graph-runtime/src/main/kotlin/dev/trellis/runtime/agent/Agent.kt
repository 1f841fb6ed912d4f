package dev.trellis.runtime.agent

/**
 * An agent: something that answers a prompt, usually an LLM with tools, that may keep conversation
 * state between calls.
 *
 * Wrap an agent in a graph node with [agentNode]. Each execution of such a node is isolated: it starts
 * from the agent's state as it was before the execution and leaves no trace in it afterwards, so one
 * agent instance can be reused by many nodes and many concurrent runs without leaking conversation
 * history between them. How the node isolates the agent depends on what the agent supports:
 *
 * - **Sessions** (preferred): when [session] returns a fresh agent, the execution calls that session and
 *   then drops it. Sessions of one agent run fully in parallel.
 * - **Snapshot and restore**: otherwise the node takes a [snapshot] before the call and [restore]s it
 *   afterwards (also when the call fails or is cancelled). Because the agent's state is shared mutable
 *   state, calls of one instance through agent nodes are **serialized** (one at a time, per instance) —
 *   snapshot/restore around overlapping calls could not keep them apart.
 *
 * ```kotlin
 * class EchoAgent : Agent {
 *     private val history = ArrayList<String>()
 *     override suspend fun call(input: AgentInput, scope: AgentScope): String {
 *         history += input.prompt
 *         scope.step("thinking about ${input.prompt}")
 *         return "echo: ${input.prompt} (${history.size} messages)"
 *     }
 *     override fun snapshot(): AgentSnapshot = AgentSnapshot(history.toList())
 *     override fun restore(snapshot: AgentSnapshot) {
 *         history.clear()
 *         history += snapshot.value as List<String>
 *     }
 * }
 * ```
 */
public interface Agent {
    /** The agent's name, shown in events and diagrams. */
    public val name: String get() = javaClass.simpleName

    /**
     * Answers [input] and returns the reply; streams tokens and steps through [scope], which become
     * custom events of the run. May suspend; must be cancellable.
     */
    public suspend fun call(input: AgentInput, scope: AgentScope): String

    /**
     * Returns a copy of the agent's conversation state, or null when it keeps none. Called by [agentNode]
     * before each call when the agent offers no [session].
     */
    public fun snapshot(): AgentSnapshot? = null

    /** Puts back a state taken with [snapshot]. Called by [agentNode] after each call, also a failed one. */
    public fun restore(snapshot: AgentSnapshot) {}

    /**
     * Returns a fresh agent that starts from this agent's current conversation state and is independent
     * of it, or null when the agent cannot make one (then calls are serialized, see [Agent]).
     *
     * Must be safe to call from several threads at once. The session is used for one execution and dropped.
     */
    public fun session(): Agent? = null
}
