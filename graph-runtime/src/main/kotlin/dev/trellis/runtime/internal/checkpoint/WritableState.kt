package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.internal.rethrowIfFatal

/**
 * [state] without the values a checkpoint cannot hold (their serializer fails to write them): those keys are left
 * unset. Used only for the FAILED checkpoint of a run whose checkpoint could not be written, so that the store
 * records the failure (the error, not the bad value) instead of still showing the run RUNNING and resumable.
 * Returns [state] itself when every value can be written.
 */
internal fun writableState(keys: Array<StateKey<*>>, state: State): State {
    var values: Array<Any?>? = null
    for (key in keys) {
        val value = state.valueAt(key.index)
        if (value === State.Unset) continue
        try {
            PositionCodec.encodeValueText(key, value)
        } catch (e: Throwable) {
            e.rethrowIfFatal(null)
            val copy = values ?: state.copyValues().also { values = it }
            copy[key.index] = State.Unset
        }
    }
    return values?.let { State.fromArrays(state.schema, it, state.copyVersions()) } ?: state
}
