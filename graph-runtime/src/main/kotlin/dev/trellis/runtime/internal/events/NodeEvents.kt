package dev.trellis.runtime.internal.events

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.scheduling.Engine
import java.time.Duration
import java.time.Instant

/*
 * The timestamps of the driver's node events ([completedAt], [startedAt]) and the events a node's body sends itself
 * ([emitCustom], [emitRetrying]), for an [Engine].
 */

/** Reads the clock for a `NodeCompleted` (and its `EdgeTaken`s), noting the reading for [startedAt]. */
internal fun Engine.completedAt(): Instant = now().also {
    position.lastCompletedAt = it
    position.lastCompletedNanos = nanoTime()
}

/**
 * The timestamp of a `NodeStarted`: the last `NodeCompleted`'s when less than [SHARED_STAMP_NANOS] of the run's time
 * passed since it was read (the driver begins the nodes a completion made ready right after it), else the clock's
 * (`docs/semantics.md` §8). One reading of the clock serves both events; a node begun after a wait reads it anew.
 */
internal fun Engine.startedAt(): Instant {
    val last = position.lastCompletedAt ?: return now()
    return if (nanoTime() - position.lastCompletedNanos < SHARED_STAMP_NANOS) last else now()
}

internal suspend fun Engine.emitCustom(execution: Execution, payload: Any) {
    outbox.nodeSend { seq ->
        RunEvent.Custom(execution.eventHead(seq, now()), payload)
    }
}

internal suspend fun Engine.emitRetrying(execution: Execution, error: Throwable, delay: Duration) {
    outbox.nodeSend { seq ->
        RunEvent.NodeRetrying(execution.eventHead(seq, now()), execution.attempt, error, delay)
    }
}

/** How soon after a `NodeCompleted` a `NodeStarted` shares its timestamp ([Engine.startedAt]): 10 µs of run time. */
internal const val SHARED_STAMP_NANOS: Long = 10_000
