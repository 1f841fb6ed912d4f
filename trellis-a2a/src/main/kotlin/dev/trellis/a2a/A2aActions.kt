package dev.trellis.a2a

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.NodeAction
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import java.util.function.Function

/**
 * Remote-agent nodes for a Java `JavaGraph`: actions to declare with `blockingNode` (the call blocks its thread,
 * which the blocking node's executor provides and interrupts when the run is cancelled, and then the remote task is
 * cancelled). They behave as [remoteAgentNode].
 *
 * ```java
 * builder.blockingNode("write", A2aActions.remoteAgent(writer, text, s -> "Write about " + s.get(topic)));
 * ```
 */
public object A2aActions {
    /** Sends the text [prompt] builds to [agent] and writes its artifacts' text to [output] (see [remoteAgentNode]). */
    @JvmStatic
    @JvmOverloads
    public fun remoteAgent(
        agent: RemoteAgent,
        output: StateKey<String>,
        prompt: Function<State, String>,
        artifacts: Map<String, StateKey<String>> = emptyMap(),
    ): NodeAction = NodeAction { context ->
        // On the IO pool, not this thread's event loop: when the run interrupts this thread, runBlocking throws at
        // once, and the exchange, cancelled, still cancels the remote task there.
        val outcome = runBlocking(Dispatchers.IO) {
            agent.exchange(prompt.apply(context.state), context.runId, { context.emit(it) }, { context.interrupt(it) })
        }
        context.set(output, outcome.text)
        for ((name, key) in artifacts) outcome.artifacts[name]?.let { context.set(key, it) }
    }
}
