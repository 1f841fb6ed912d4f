package dev.trellis.langchain4j

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import kotlinx.serialization.builtins.ListSerializer

/**
 * Conversation memory in the state: a key holding a run's messages, appended to by the nodes that talk to a model
 * and kept in every checkpoint, so a resumed run (after a crash, an interrupt or a deploy) continues the same
 * conversation. Each run has its own; nothing is shared between runs.
 *
 * ```kotlin
 * object Chat : StateSchema("chat") {
 *     val history = Conversation.key(this, "history")
 * }
 * ```
 */
public object Conversation {
    /**
     * Declares key [name] of [schema]: a `List<Message>` that starts empty, with `Reducer.append()`, so each
     * write appends its messages (parallel writers, such as the tasks of a tool node, append in task order).
     */
    @JvmStatic
    public fun key(schema: StateSchema, name: String): StateKey<List<Message>> =
        schema.key(
            name,
            ListSerializer(Message.serializer()),
            List::class.java,
            false,
            emptyList(),
            Reducer.append(),
        )
}
