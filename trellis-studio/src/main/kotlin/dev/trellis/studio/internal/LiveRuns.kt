package dev.trellis.studio.internal

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunHandle
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import java.util.concurrent.ConcurrentHashMap

/**
 * The events of the runs this JVM showed the studio (started, resumed or forked through it, or [record]ed by the
 * caller), kept while the studio runs (the last [LIMIT] of each run), so their pages are live and their timelines
 * exact; every other run is shown from its checkpoints.
 */
internal class LiveRuns {
    class Run(val runId: String) {
        val events = ArrayList<RunEvent>()
        val listeners = ArrayList<Channel<RunEvent>>()

        @Volatile
        var handle: RunHandle? = null

        @Volatile
        var job: Job? = null

        @Volatile
        var running = true

        /** Whether the studio cancelled it, since it last started or resumed it. */
        @Volatile
        var cancelled = false

        /** Whether the studio can cancel it (it started, resumed or forked it, and it has not ended). */
        val cancellable: Boolean get() = running && (handle != null || job != null)

        fun cancel() {
            cancelled = true
            handle?.cancel()
            job?.cancel()
        }
    }

    private val runs = ConcurrentHashMap<String, Run>()

    operator fun get(runId: String): Run? = runs[runId]

    /** Opens [runId] for events (again, when it is resumed: its new events follow the earlier ones). */
    fun begin(runId: String): Run = runs.computeIfAbsent(runId, ::Run).also {
        synchronized(it) {
            it.running = true
            it.cancelled = false
            it.handle = null
            it.job = null
        }
    }

    fun record(event: RunEvent) {
        val run = runs.computeIfAbsent(event.runId, ::Run)
        synchronized(run) {
            if (run.events.size >= LIMIT) run.events.removeAt(0)
            run.events += event
            for (listener in run.listeners) listener.trySend(event)
            if (event is RunEvent.Terminal) {
                run.running = false
                run.listeners.forEach { it.close() }
                run.listeners.clear()
            }
        }
    }

    /** Marks [runId] ended (its collection stopped), closing the streams that follow it. */
    fun end(runId: String) {
        val run = runs[runId] ?: return
        synchronized(run) {
            run.running = false
            run.listeners.forEach { it.close() }
            run.listeners.clear()
        }
    }

    /** The events so far and a channel of those to come (closed at the run's end), or null for an unknown run. */
    fun follow(runId: String): Pair<List<RunEvent>, Channel<RunEvent>?>? {
        val run = runs[runId] ?: return null
        synchronized(run) {
            val past = run.events.toList()
            if (!run.running) return past to null
            val channel = Channel<RunEvent>(Channel.UNLIMITED)
            run.listeners += channel
            return past to channel
        }
    }

    fun unfollow(runId: String, channel: Channel<RunEvent>) {
        val run = runs[runId] ?: return
        synchronized(run) { run.listeners.remove(channel) }
    }

    fun events(runId: String): List<RunEvent>? = runs[runId]?.let { synchronized(it) { it.events.toList() } }

    private companion object {
        const val LIMIT = 20_000
    }
}
