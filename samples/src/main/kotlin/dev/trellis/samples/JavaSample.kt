package dev.trellis.samples

import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runInterruptible

/**
 * The CLI's view of [JavaFacadeSample], a graph built and run from plain Java: its streamed events go to the
 * console as they come; the summary shows the `invokeAsync` run. Runs in real time (the facade's own pools).
 */
internal object JavaSample : Sample {
    override val name: String = "java"
    override val description: String =
        "the Java facade: JavaGraph.builder, fan-out to a join, a retry, a loop, an agent written in Java, invokeAsync and a Flow.Publisher"

    override suspend fun run(
        context: SampleContext,
        onEvent: suspend (RunEvent) -> Unit,
    ): SampleOutcome = coroutineScope {
        val events = Channel<RunEvent>(Channel.UNLIMITED)
        val forward = launch { for (event in events) onEvent(event) }
        val summary = try {
            runInterruptible(Dispatchers.IO) { JavaFacadeSample.run { events.trySend(it) } }
        } finally {
            events.close()
        }
        forward.join()
        SampleOutcome(listOf(summary.result), summary.notes())
    }
}
