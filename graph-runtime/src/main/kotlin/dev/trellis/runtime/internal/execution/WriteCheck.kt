package dev.trellis.runtime.internal.execution

import dev.trellis.graph.StateKey

/**
 * Checks a node's write the way a run's input is checked: [value] must be of [key]'s class, and `null` only for a
 * nullable key. Java callers (raw types, unchecked casts, a Jackson key) and Kotlin casts can pass anything; a value
 * that got into the state would be saved in checkpoints that can never be loaded again, or end the run with `null`
 * in a non-null key. One class check per write.
 *
 * @throws IllegalArgumentException naming the node, the key, its type and what was given.
 */
internal fun checkWrite(nodeId: String, key: StateKey<*>, value: Any?) {
    if (key.accepts(value)) return
    val given = if (value == null) "null" else "a value of type ${value.javaClass.name}"
    throw IllegalArgumentException(
        "Node '$nodeId' wrote $given to state key '${key.name}', which holds values of type ${key.typeName}; the " +
            "write was refused and the node failed. Write a value of type ${key.typeName}" +
            (if (value == null) " (or declare the key nullable)." else "."),
    )
}
