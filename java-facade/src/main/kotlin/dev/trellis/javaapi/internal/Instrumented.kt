package dev.trellis.javaapi.internal

import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import kotlinx.coroutines.flow.Flow

/**
 * The result of the run whose events [events] are, as `Graph.invoke` returns it: collects them to the terminal one and
 * throws [GraphRunException] for a failed run.
 */
internal suspend fun resultOf(events: Flow<RunEvent>): RunResult {
    var result: RunResult? = null
    events.collect { if (it is RunEvent.Terminal) result = it.result }
    val ended = checkNotNull(result) { "The run's events ended without a terminal event." }
    if (ended.status == Status.FAILED) throw GraphRunException(ended)
    return ended
}
