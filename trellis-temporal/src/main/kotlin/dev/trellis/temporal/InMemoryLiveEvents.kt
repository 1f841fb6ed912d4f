package dev.trellis.temporal

import dev.trellis.graph.Graph
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.flow

/**
 * [LiveEvents] for workers and callers in one JVM (tests, samples, an application that embeds its worker): it
 * keeps the events of the last [retainedRuns] runs that published or were subscribed to, so that a caller who
 * subscribes late still gets a run's events from its first.
 *
 * ```kotlin
 * val live = InMemoryLiveEvents()
 * TemporalWorkers.register(worker, listOf(research), TemporalOptions(liveEvents = live))
 * val runner = TemporalRunner(client, "research", live)
 * ```
 */
public class InMemoryLiveEvents @JvmOverloads constructor(
    /** How many runs' events are kept; the oldest run's are dropped beyond. */
    private val retainedRuns: Int = 1000,
) : LiveEvents {
    init {
        require(retainedRuns > 0) { "retainedRuns must be positive, but was $retainedRuns." }
    }

    private class RunLog {
        val events = ArrayList<LiveEvent>()
        val size = MutableStateFlow(0)
    }

    private val runs = LinkedHashMap<String, RunLog>()

    private fun log(runId: String): RunLog = synchronized(runs) {
        runs.getOrPut(runId) { RunLog() }.also {
            while (runs.size > retainedRuns) runs.remove(runs.keys.first())
        }
    }

    override fun publish(event: LiveEvent) {
        val log = log(event.key.runId)
        synchronized(log) {
            log.events += event
            log.size.value = log.events.size
        }
    }

    /** The events of [runId] as they were published, objects as they are ([graph] is not needed in one JVM). */
    override fun subscribe(runId: String, graph: Graph): Flow<LiveEvent> = flow {
        val log = log(runId)
        var next = 0
        log.size.collect { size ->
            while (next < size) {
                emit(synchronized(log) { log.events[next] })
                next++
            }
        }
    }
}
