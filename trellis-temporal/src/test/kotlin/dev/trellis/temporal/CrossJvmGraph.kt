package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.RunEvent
import java.nio.file.Files
import java.nio.file.Path
import kotlin.time.Duration.Companion.milliseconds

/**
 * The graph `PostgresLiveEventsTest` runs on a worker in another JVM and locally: `talk` emits two payloads (a
 * string and a number), then waits until the [release] file exists (the test makes it once both reached it: they
 * came live), then emits a third; `flaky` fails its first attempt and is retried; `last` writes.
 */
internal object CrossJvmGraph {
    object S : StateSchema("cross-jvm") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val count = key("count", default = 0)
    }

    fun graph(release: Path): Graph {
        var failures = 0
        return graph("cross-jvm", S) {
            val talk = node("talk") {
                emit("tok-1")
                emit(42)
                val deadline = System.nanoTime() + 120_000_000_000L
                while (!Files.exists(release) && System.nanoTime() < deadline) Thread.sleep(10)
                emit("tok-3")
                set(S.log, listOf("talked"))
            }
            val flaky = node("flaky", retry = Retry.fixed(2, 1.milliseconds)) {
                if (failures++ == 0) throw IllegalStateException("flaky once")
                set(S.count, 7)
            }
            val last = node("last") { set(S.log, listOf("last")) }
            start(talk)
            talk then flaky
            flaky then last
        }
    }

    /**
     * What the caller compares of an event: kind, path, sequence (a live payload's is -1, see [payloadSequenceOk]),
     * payload rendering, and an error as the type the node threw and its message.
     */
    fun describe(event: RunEvent): String {
        val path = (event as? RunEvent.NodeEvent)?.path ?: ""
        val sequence = if (event is RunEvent.Custom) "" else event.sequence.toString()
        val detail = when (event) {
            is RunEvent.Custom -> event.payload.toString()
            is RunEvent.NodeRetrying -> error(event.error)
            is RunEvent.NodeFailed -> error(event.error)
            is RunEvent.EdgeTaken -> "${event.from}->${event.to}"
            is RunEvent.Terminal -> "${event.result.status} ${event.result.state[S.log]} ${event.result.state[S.count]}"
            else -> ""
        }
        return "${event.javaClass.simpleName}:$path:$sequence:$detail"
    }

    /** A payload's sequence on Temporal: the local one when the workflow's copy came first, -1 when the live one. */
    fun payloadSequenceOk(local: RunEvent, remote: RunEvent): Boolean =
        remote !is RunEvent.Custom || remote.sequence == -1L || remote.sequence == local.sequence

    private fun error(e: Throwable) = "${(e as? TemporalNodeException)?.type ?: e.javaClass.name}: ${e.message}"
}
