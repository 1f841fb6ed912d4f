package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.rethrowIfFatal

/**
 * For a checkpointed run: writes each state key's first value to JSON and reads it back, so that a value its
 * key's serializer writes but cannot read (a Jackson class without a creator, say) fails where it was written,
 * naming the key, instead of being stored in checkpoints that can then never be loaded (resume, fork and `stateAt`
 * would fail). Only the first value of each key is read back: later ones cost nothing.
 *
 * Checks at declaration (`StateSchema`, the Java `Keys`) catch what can be seen without a value; this catches the rest.
 */
internal class ReadBack(private val keys: Array<StateKey<*>>) {
    /** The keys whose first written value read back. */
    private val checked = BooleanArray(keys.size)

    /**
     * The failure to give [execution] when one of its writes, the first to its key, does not read back; null when
     * they all do (or were not the first).
     */
    fun refuse(execution: Execution): Throwable? {
        for (i in 0 until execution.writeCount) {
            val index = execution.writeKeyAt(i)
            if (checked[index]) continue
            val key = keys[index]
            val problem = problem(key, execution.writeValueAt(i))
            if (problem == null) {
                checked[index] = true
                continue
            }
            return IllegalStateException(
                "Node '${execution.node.id}' wrote a value of state key '${key.name}' (${key.typeName}) that a " +
                    "checkpoint " +
                    "cannot hold: $problem. Saved, it would make the run's checkpoints unreadable (resume, fork " +
                    "and stateAt " +
                    "would fail), so the node failed and none of its writes was applied. ${advice()}",
            )
        }
        return null
    }

    /**
     * Checks the values [state] starts a new run with.
     * @throws IllegalArgumentException naming the first key whose value does not read back.
     */
    fun requireReadable(state: State) {
        for (key in keys) {
            val value = state.valueAt(key.index)
            if (value === State.Unset) continue
            val problem = problem(key, value) ?: continue
            throw IllegalArgumentException(
                "The input value of state key '${key.name}' (${key.typeName}) cannot be checkpointed: $problem. " +
                    "Nothing was run. ${advice()}",
            )
        }
    }

    private fun advice() =
        "Give the key a serializer that reads back what it writes (with Jackson: a record, a constructor or factory " +
            "annotated @JsonCreator, or a no-argument constructor with setters)."

    /** Why [value] of [key] does not survive a checkpoint, or null when it reads back as a value of [key]. */
    private fun problem(key: StateKey<*>, value: Any?): String? {
        val text = try {
            PositionCodec.encodeValueText(key, value)
        } catch (e: Throwable) {
            e.rethrowIfFatal(null)
            return "its serializer cannot write it (${(e.cause ?: e).message})"
        }
        val back = try {
            PersistenceJson.decodeFromString(key.serializer, text)
        } catch (e: Throwable) {
            e.rethrowIfFatal(null)
            return "it was written as $text but cannot be read back (${e.message?.lineSequence()?.first()})"
        }
        if (!key.accepts(back)) return "it was written as $text but reads back as ${back?.javaClass?.name ?: "null"}"
        return null
    }
}
