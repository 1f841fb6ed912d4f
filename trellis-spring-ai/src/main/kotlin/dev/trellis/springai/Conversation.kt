package dev.trellis.springai

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import kotlinx.serialization.builtins.ListSerializer

/**
 * Conversation memory in the state: a key holding a run's messages, appended to by the nodes that talk to a model
 * and kept in every checkpoint, so a resumed run continues the same conversation. Each run has its own.
 *
 * ```kotlin
 * object Chat : StateSchema("chat") {
 *     val history = Conversation.key(this, "history")
 * }
 * ```
 */
public object Conversation {
    /**
     * Declares key [name] of [schema]: a `List<StoredMessage>` that starts empty, with `Reducer.append()`, so each
     * write appends its messages (parallel writers, such as the tasks of a tool node, append in task order).
     */
    @JvmStatic
    public fun key(schema: StateSchema, name: String): StateKey<List<StoredMessage>> =
        schema.key(
            name,
            ListSerializer(StoredMessage.serializer()),
            List::class.java,
            false,
            emptyList(),
            Reducer.append(),
        )
}
