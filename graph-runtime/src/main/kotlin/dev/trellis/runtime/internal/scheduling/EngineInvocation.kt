package dev.trellis.runtime.internal.scheduling

import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.ResumableRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.events.EventLog
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlin.coroutines.EmptyCoroutineContext

/**
 * Runs this engine for a caller that waits for the result (on [RunOptions.dispatcher] when set).
 * @throws GraphRunException when the run failed.
 */
internal suspend fun Engine.resultFor(options: RunOptions): RunResult {
    val dispatcher = options.dispatcher
    val result = if (dispatcher == null) execute() else withContext(dispatcher) { execute() }
    if (result.status == Status.FAILED) throw GraphRunException(result)
    result.stoppedBy?.let { throw ResumableRunException(result, it) }
    return result
}

/**
 * A cold flow of the events of the engine [create] makes for each collection: the run goes on in a child
 * coroutine, its events reach the collector in sequence order ([EventLog]), and a collector that stops reading
 * cancels the run.
 */
internal fun engineEvents(
    options: RunOptions,
    create: suspend (EventLog) -> Engine,
): Flow<RunEvent> = flow {
    coroutineScope {
        val log = EventLog()
        val engine = create(log)
        launch(options.dispatcher ?: EmptyCoroutineContext) {
            try {
                engine.execute()
            } finally {
                log.close()
            }
        }
        try {
            while (true) {
                val event = log.poll() ?: if (log.awaitEvent()) continue else break
                emit(event)
            }
        } finally {
            // A collector that stopped reading must not hold up the cancelled run's last events.
            log.cancel()
        }
    }
}
