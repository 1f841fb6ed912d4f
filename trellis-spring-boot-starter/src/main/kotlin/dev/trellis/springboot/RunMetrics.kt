package dev.trellis.springboot

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import io.micrometer.core.instrument.Counter
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Timer
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.onCompletion
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.onStart
import java.util.concurrent.atomic.AtomicInteger

/**
 * Micrometer metrics of the runs a [TrellisRunners] starts, from their events:
 *
 * - `trellis.runs` (counter; tags `graph`, `status`): runs that ended, by their final status (`COMPLETED`, `FAILED`,
 *   `CANCELLED`, `INTERRUPTED`);
 * - `trellis.node.duration` (timer; tags `graph`, `node`, `outcome` = `completed` or `failed`): node executions, all
 *   attempts of one execution together; the tasks of a map node count under the map node's id;
 * - `trellis.runs.active` (gauge): runs started and not ended.
 */
internal class RunMetrics(private val registry: MeterRegistry) : RunInstrumentation {
    private val active = AtomicInteger()

    init {
        registry.gauge("trellis.runs.active", active)
    }

    override fun instrument(
        graph: Graph,
        options: RunOptions,
        resumedRunId: String?,
        run: (RunOptions) -> Flow<RunEvent>,
    ): Flow<RunEvent> = run(options)
        .onStart { active.incrementAndGet() }
        .onEach { event -> record(graph.id, event) }
        .onCompletion { active.decrementAndGet() }

    private fun record(graph: String, event: RunEvent) {
        when (event) {
            is RunEvent.NodeCompleted -> nodeTimer(graph, event.nodeId, "completed").record(event.duration)
            is RunEvent.NodeFailed -> nodeTimer(graph, event.nodeId, "failed").record(event.duration)
            is RunEvent.Terminal -> Counter.builder("trellis.runs")
                .description("Runs that ended, by final status")
                .tag("graph", graph)
                .tag("status", event.result.status.name)
                .register(registry)
                .increment()
            else -> Unit
        }
    }

    private fun nodeTimer(graph: String, node: String, outcome: String): Timer = Timer.builder("trellis.node.duration")
        .description("Node executions, from start to end, all attempts included")
        .tag("graph", graph)
        .tag("node", node)
        .tag("outcome", outcome)
        .register(registry)
}
