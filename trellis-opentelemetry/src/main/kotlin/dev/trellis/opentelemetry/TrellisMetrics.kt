package dev.trellis.opentelemetry

import dev.trellis.runtime.Status
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.metrics.DoubleHistogram
import io.opentelemetry.api.metrics.LongCounter
import io.opentelemetry.api.metrics.LongHistogram
import io.opentelemetry.api.metrics.LongUpDownCounter
import io.opentelemetry.api.metrics.Meter

/** The instruments of Trellis runs (`docs/observability.md` lists them). */
internal class TrellisMetrics(meter: Meter) {
    private val runDuration: DoubleHistogram = meter.histogramBuilder("trellis.run.duration")
        .setUnit("s").setDescription("How long runs took, by graph and final status.").build()
    private val runs: LongCounter = meter.counterBuilder("trellis.runs")
        .setDescription("Runs that ended, by graph and final status.").build()
    private val active: LongUpDownCounter = meter.upDownCounterBuilder("trellis.runs.active")
        .setDescription("Runs in progress, by graph.").build()
    private val nodeDuration: DoubleHistogram = meter.histogramBuilder("trellis.node.duration")
        .setUnit(
            "s",
        ).setDescription("How long node executions took (retries included), by graph, node and status.").build()
    private val nodeExecutions: LongCounter = meter.counterBuilder("trellis.node.executions")
        .setDescription("Node executions that ended, by graph, node and status.").build()
    private val retries: LongCounter = meter.counterBuilder("trellis.node.retries")
        .setDescription("Failed attempts that were retried, by graph and node.").build()
    private val checkpointLatency: DoubleHistogram = meter.histogramBuilder("trellis.checkpoint.write.duration")
        .setUnit("s").setDescription("How long writing a checkpoint to the store took, by graph and kind.").build()
    private val checkpointSize: LongHistogram = meter.histogramBuilder("trellis.checkpoint.size")
        .ofLongs().setUnit("By").setDescription("Checkpoint payload size in bytes (UTF-8), by graph and kind.").build()

    fun runStarted(graphId: String) = active.add(1, Attributes.of(Attr.GRAPH_ID, graphId))

    fun runEnded(graphId: String, status: Status, nanos: Long) {
        active.add(-1, Attributes.of(Attr.GRAPH_ID, graphId))
        val attributes = Attributes.of(Attr.GRAPH_ID, graphId, Attr.STATUS, status.name)
        runs.add(1, attributes)
        runDuration.record(nanos / 1e9, attributes)
    }

    /** An execution ended; [nanos] is its duration, negative when unknown (a cancelled execution). */
    fun nodeEnded(graphId: String, nodeId: String, status: Status, nanos: Long) {
        val attributes = Attributes.of(Attr.GRAPH_ID, graphId, Attr.NODE_ID, nodeId, Attr.STATUS, status.name)
        nodeExecutions.add(1, attributes)
        if (nanos >= 0) nodeDuration.record(nanos / 1e9, attributes)
    }

    fun retried(graphId: String, nodeId: String) = retries.add(
        1,
        Attributes.of(Attr.GRAPH_ID, graphId, Attr.NODE_ID, nodeId),
    )

    fun checkpointWritten(graphId: String, full: Boolean, nanos: Long, bytes: Long) {
        val attributes = Attributes.of(Attr.GRAPH_ID, graphId, Attr.CHECKPOINT_FULL, full)
        checkpointLatency.record(nanos / 1e9, attributes)
        checkpointSize.record(bytes, attributes)
    }
}
