package dev.trellis.a2a

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import kotlin.time.Duration

/**
 * Declares a node [id] that gives a task to the remote A2A [agent]: it sends the text [prompt] builds from the state
 * as a new task (context id: the run's id), and
 *
 * - **streams** each update of the task into the run's events, as custom events of the node ([A2aEvent.Status],
 *   [A2aEvent.Artifact]);
 * - when the task **completes**, writes the text of its artifacts to [output] (all of them, in order; the final
 *   status message's text when it has none) and the artifacts named in [artifacts] to their keys;
 * - when the agent asks for **input** (`input-required`), interrupts the run with the agent's question; the answer
 *   given on resume goes back to the remote task (a resumed node starts its remote task again, so the remote agent
 *   runs at least once per execution, as every node's body);
 * - when the task fails, is rejected or cancelled, fails the attempt with [RemoteAgentException] ([retry] decides);
 * - when the run is **cancelled** (or the attempt times out, [timeout]), cancels the remote task.
 *
 * ```kotlin
 * val ask = remoteAgentNode("research", researcher, Doc.findings) { "Find sources on ${it[Doc.topic]}" }
 * ```
 *
 * Kotlin only (a [Duration] and a Kotlin lambda); a Java `JavaGraph` declares the node with
 * [A2aActions.remoteAgent] and its builder's `blockingNode`, which take the timeout and retry.
 */
@JvmSynthetic
public fun GraphBuilder.remoteAgentNode(
    id: String,
    agent: RemoteAgent,
    output: StateKey<String>,
    artifacts: Map<String, StateKey<String>> = emptyMap(),
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    prompt: (State) -> String,
): NodeRef = node(id, timeout, retry, description ?: "remote A2A agent '${agent.name}'") {
    val outcome = agent.exchange(prompt(state), runId, { emit(it) }, { interrupt(it) })
    set(output, outcome.text)
    for ((name, key) in artifacts) outcome.artifacts[name]?.let { set(key, it) }
}
