package dev.trellis.opentelemetry

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.context.Context
import kotlinx.coroutines.CancellationException

/**
 * The trace of one run: its span (a child of [parent], linked to the run it [resumes]), the spans of its node
 * executions ([NodeSpans]) and its metrics, fed by the run's events ([observe]) in delivery order.
 */
internal class RunTrace(
    private val telemetry: TrellisTelemetry,
    private val graph: Graph,
    parent: Context,
    resumes: SpanContext?,
) {
    private val span: Span = telemetry.tracer.spanBuilder("trellis.run ${graph.id}")
        .setParent(parent)
        .setSpanKind(SpanKind.INTERNAL)
        .setAttribute(Attr.GRAPH_ID, graph.id)
        .setAttribute(Attr.GRAPH_VERSION, graph.schema.version.toLong())
        .also { if (resumes != null && resumes.isValid) it.addLink(resumes, Attributes.of(Attr.LINK_KIND, "resumes")) }
        .startSpan()

    /** The run span's context: the parent of its node spans, current in the run's coroutines. */
    val context: Context = parent.with(span)

    /** The hook that makes each node execution's span current while its body runs. */
    val nodes = NodeSpans(telemetry.tracer, graph, context)

    private var startNanos = System.nanoTime()
    private var runId: String? = null
    private var ended = false

    fun observe(event: RunEvent) {
        when (event) {
            is RunEvent.RunStarted -> {
                runId = event.runId
                nodes.runId = event.runId
                span.setAttribute(Attr.RUN_ID, event.runId)
                telemetry.metrics.runStarted(graph.id)
            }
            is RunEvent.NodeStarted -> if (event.task >= 0) nodes.taskStarted(event)
            is RunEvent.NodeRetrying -> {
                nodes.retrying(event)
                if (ownNodeOrTask(event)) telemetry.metrics.retried(graph.id, event.nodeId)
            }
            is RunEvent.Custom -> nodes.custom(event)
            is RunEvent.NodeCompleted -> nodeEnded(
                event,
                Status.COMPLETED,
                event.attempts,
                null,
                event.duration.toNanos(),
            )
            is RunEvent.NodeFailed -> nodeEnded(
                event,
                Status.FAILED,
                event.attempts,
                event.error,
                event.duration.toNanos(),
            )
            is RunEvent.NodeCancelled -> nodeEnded(event, null, 0, null, -1)
            is RunEvent.NodeCompensating -> Unit
            is RunEvent.NodeCompensated ->
                span.addEvent("trellis.compensated", Attributes.of(Attr.NODE_ID, event.nodeId))
            is RunEvent.NodeCompensationFailed -> span.addEvent(
                "trellis.compensation_failed",
                Attributes.of(Attr.NODE_ID, event.nodeId, Attr.PAYLOAD, event.error.toString()),
            )
            is RunEvent.CheckpointSaved -> span.addEvent(
                "trellis.checkpoint",
                Attributes.of(Attr.CHECKPOINT_SEQUENCE, event.checkpoint, Attr.CHECKPOINT_FULL, event.full),
            )
            is RunEvent.EdgeTaken,
            is RunEvent.NodeCacheHit,
            is RunEvent.NodeCacheStored,
            is RunEvent.MetersCharged,
            -> Unit
            is RunEvent.Terminal -> finish(event)
        }
    }

    /**
     * Whether [event] is about a node of the run's own graph or one of its map tasks (`summarize[3]`), not about a
     * node of a child run (`research/web`, `summarize[3]/web`).
     */
    private fun ownNodeOrTask(event: RunEvent.NodeEvent): Boolean {
        val path = event.path
        return path == event.nodeId || (event.task >= 0 && path.indexOf('/') < 0)
    }

    private fun nodeEnded(event: RunEvent.NodeEvent, known: Status?, attempts: Int, error: Throwable?, nanos: Long) {
        val status = known ?: nodes.cancelledStatus(event)
        nodes.ended(event, status, attempts, error)
        // Metrics count the executions of the run's own nodes (child runs' nodes and map tasks only have spans).
        if (event.path == event.nodeId) telemetry.metrics.nodeEnded(graph.id, event.nodeId, status, nanos)
    }

    private fun finish(event: RunEvent.Terminal) {
        val result = event.result
        span.setAttribute(Attr.STATUS, result.status.name)
        for (interrupt in result.interrupts) {
            span.addEvent(
                "trellis.interrupt",
                Attributes.of(Attr.NODE_ID, interrupt.nodeId, Attr.PAYLOAD, interrupt.payload),
            )
        }
        result.error?.let {
            span.recordException(it)
            span.setStatus(StatusCode.ERROR, it.toString())
        }
        nodes.endOpen(Status.CANCELLED)
        span.end()
        ended = true
        telemetry.metrics.runEnded(graph.id, result.status, System.nanoTime() - startNanos)
    }

    /** The collection ended without a terminal event (the collector was cancelled, or failed). */
    fun abort(error: Throwable) {
        if (ended) return
        ended = true
        nodes.endOpen(Status.CANCELLED)
        span.setAttribute(Attr.STATUS, Status.CANCELLED.name)
        if (error !is CancellationException) {
            span.recordException(error)
            span.setStatus(StatusCode.ERROR, error.toString())
        }
        span.end()
        if (runId != null) telemetry.metrics.runEnded(graph.id, Status.CANCELLED, System.nanoTime() - startNanos)
    }
}

/** The attribute keys of Trellis spans and metrics. */
internal object Attr {
    val GRAPH_ID: AttributeKey<String> = AttributeKey.stringKey("trellis.graph.id")
    val GRAPH_VERSION: AttributeKey<Long> = AttributeKey.longKey("trellis.graph.version")
    val RUN_ID: AttributeKey<String> = AttributeKey.stringKey("trellis.run.id")
    val NODE_ID: AttributeKey<String> = AttributeKey.stringKey("trellis.node.id")
    val EXECUTION: AttributeKey<Long> = AttributeKey.longKey("trellis.node.execution")
    val PATH: AttributeKey<String> = AttributeKey.stringKey("trellis.node.path")
    val TASK: AttributeKey<Long> = AttributeKey.longKey("trellis.map.task")
    val ATTEMPT: AttributeKey<Long> = AttributeKey.longKey("trellis.node.attempt")
    val STATUS: AttributeKey<String> = AttributeKey.stringKey("trellis.status")
    val CHECKPOINT_SEQUENCE: AttributeKey<Long> = AttributeKey.longKey("trellis.checkpoint.sequence")
    val CHECKPOINT_FULL: AttributeKey<Boolean> = AttributeKey.booleanKey("trellis.checkpoint.full")
    val PAYLOAD: AttributeKey<String> = AttributeKey.stringKey("trellis.payload")
    val DELAY_MS: AttributeKey<Long> = AttributeKey.longKey("trellis.retry.delay_ms")
    val LINK_KIND: AttributeKey<String> = AttributeKey.stringKey("trellis.link")
}
