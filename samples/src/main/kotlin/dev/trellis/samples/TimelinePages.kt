package dev.trellis.samples

import dev.trellis.runtime.RunEvent
import dev.trellis.studio.timeline.RunTimeline
import java.nio.file.Path

/** `--timeline FILE`: collects each run's events and writes one HTML timeline page per run. */
internal class TimelinePages(private val file: Path) {
    private val events = LinkedHashMap<String, MutableList<RunEvent>>()

    @Synchronized
    fun record(event: RunEvent) {
        events.getOrPut(event.runId) { ArrayList() } += event
    }

    /** Writes the page of each run of [outcome] whose graph is known; returns the files written. */
    @Synchronized
    fun write(
        outcome: SampleOutcome,
        context: SampleContext,
    ): List<Path> = outcome.results.mapIndexedNotNull { i, result ->
        val graph = context.graphs[result.graphId] ?: return@mapIndexedNotNull null
        val runEvents = events[result.runId] ?: return@mapIndexedNotNull null
        val target = if (i ==
            0
        ) {
            file
        } else {
            file.resolveSibling(file.fileName.toString().removeSuffix(".html") + "-${i + 1}.html")
        }
        RunTimeline.of(graph, result, runEvents).writeHtml(target)
    }
}
