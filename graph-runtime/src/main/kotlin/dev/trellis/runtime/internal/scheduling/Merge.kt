package dev.trellis.runtime.internal.scheduling

import dev.trellis.graph.Reducer
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.runtime.ConflictingUpdateException
import dev.trellis.runtime.internal.checkpoint.ReadBack
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.rethrowIfFatal

/**
 * The merge rule (`docs/semantics.md`): the writes of one execution apply to [current] atomically, all or none.
 * A key without a reducer may only be written by an execution that saw its latest version (else a
 * [ConflictingUpdateException] naming [lastWriter]'s writer of it); a key with a reducer folds the update into its
 * value. The [readBack] check (when the run saves checkpoints) refuses values that would not read back.
 *
 * Returns the merged state — each write gets the next version after [version], in write order — or, when the
 * writes cannot be applied, why (a [Throwable]): one return value without a wrapper, so that a merge allocates
 * nothing beyond the new state. The caller records the versions and writers ([State] is immutable; this reads
 * nothing else of the run).
 */
internal fun merge(
    schema: StateSchema,
    current: State,
    execution: Execution,
    keys: Array<StateKey<*>>,
    lastWriter: Array<String?>,
    version: Long,
    readBack: ReadBack?,
): Any {
    val count = execution.writeCount
    val snapshot = execution.snapshot
    for (i in 0 until count) {
        val k = execution.writeKeyAt(i)
        if (keys[k].reducer == null && current.versionAt(k) != snapshot.versionAt(k)) {
            return ConflictingUpdateException(keys[k].name, execution.node.id, lastWriter[k] ?: "?")
        }
    }
    readBack?.refuse(execution)?.let { return it }
    val values = current.copyValues()
    for (i in 0 until count) {
        val k = execution.writeKeyAt(i)
        val update = execution.writeValueAt(i)

        @Suppress("UNCHECKED_CAST")
        val reducer = keys[k].reducer as Reducer<Any?>?
        val old = values[k]
        values[k] = if (reducer == null || old === State.Unset) {
            update
        } else {
            try {
                reducer.reduce(old, update)
            } catch (e: Throwable) {
                e.rethrowIfFatal(null)
                return e
            }
        }
    }
    val versions = current.copyVersions(highest = version + count)
    for (i in 0 until count) State.setVersion(versions, execution.writeKeyAt(i), version + i + 1)
    return State.fromVersions(schema, values, versions)
}
