package dev.trellis.opentelemetry

import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.api.trace.Tracer
import io.opentelemetry.context.Context
import io.opentelemetry.extension.kotlin.asContextElement
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.withContext
import java.util.concurrent.ConcurrentHashMap

/**
 * The spans of a run's node executions, as the run's outermost node interceptor (`docs/semantics.md` §13). A span
 * starts with the execution's first attempt, in the node's coroutine ([intercept]), and is current while each
 * attempt runs — on whatever thread: the OpenTelemetry context travels in the coroutine context, so a Java blocking
 * node sees it on its executor's thread too. It ends when the run's events report the execution's end ([ended]),
 * after its retries and custom events were added to it. Nodes of child runs (subgraph and map nodes) get no span of
 * their own: they run inside their subgraph or map node's span, which spans created in them have as parent.
 */
internal class NodeSpans(
    private val tracer: Tracer,
    private val graph: Graph,
    private val parent: Context,
) : NodeInterceptor {
    /** The nodes of the run's own graph, by identity: run-level interceptors also wrap the nodes of child runs. */
    private val own: Set<Node> = java.util.Collections.newSetFromMap(java.util.IdentityHashMap<Node, Boolean>()).also {
        it.addAll(graph.nodes)
    }

    @Volatile
    var runId: String? = null

    private val open = ConcurrentHashMap<String, Span>()
    private val interrupted = ConcurrentHashMap.newKeySet<String>()

    private fun key(nodeId: String, execution: Int) = "$nodeId#$execution"

    private fun start(runId: String?, nodeId: String, execution: Int): Span {
        val builder = tracer.spanBuilder("trellis.node $nodeId")
            .setParent(parent)
            .setSpanKind(SpanKind.INTERNAL)
            .setAttribute(Attr.GRAPH_ID, graph.id)
            .setAttribute(Attr.NODE_ID, nodeId)
            .setAttribute(Attr.EXECUTION, execution.toLong())
        if (runId != null) builder.setAttribute(Attr.RUN_ID, runId)
        return builder.startSpan()
    }

    override suspend fun intercept(chain: NodeChain): NodeWrites {
        if (chain.node !in own) return chain.proceed()
        val key = key(chain.nodeId, chain.executionCount)
        val span = open.computeIfAbsent(key) { start(chain.runId, chain.nodeId, chain.executionCount) }
        span.setAttribute(Attr.ATTEMPT, chain.attempt.toLong())
        try {
            return withContext(parent.with(span).asContextElement()) { chain.proceed() }
        } catch (e: Throwable) {
            when {
                e.javaClass.name == INTERRUPT_SIGNAL -> {
                    interrupted += key
                    span.addEvent(
                        "trellis.interrupt",
                        Attributes.of(Attr.PAYLOAD, e.message.orEmpty().removePrefix(INTERRUPT_PREFIX)),
                    )
                }
                e !is CancellationException -> span.recordException(
                    e,
                    Attributes.of(Attr.ATTEMPT, chain.attempt.toLong()),
                )
            }
            throw e
        }
    }

    fun retrying(event: RunEvent.NodeRetrying) {
        open[key(event.nodeId, event.execution)]?.addEvent(
            "trellis.retry",
            Attributes.of(Attr.ATTEMPT, event.attempt.toLong(), Attr.DELAY_MS, event.delay.toMillis()),
        )
    }

    fun custom(event: RunEvent.Custom) {
        val payload = event.payload as? SpanEventPayload ?: return
        open[key(event.nodeId, event.execution)]?.addEvent(payload.spanEventName(), payload.spanEventAttributes())
    }

    /** The status of an execution reported cancelled: INTERRUPTED when its node asked for input. */
    fun cancelledStatus(event: RunEvent.NodeEvent): Status =
        if (interrupted.remove(key(event.nodeId, event.execution))) Status.INTERRUPTED else Status.CANCELLED

    fun ended(event: RunEvent.NodeEvent, status: Status, attempts: Int, error: Throwable?) {
        val span = open.remove(key(event.nodeId, event.execution)) ?: start(runId, event.nodeId, event.execution)
        span.setAttribute(Attr.STATUS, status.name)
        if (attempts > 0) span.setAttribute(Attr.ATTEMPT, attempts.toLong())
        if (error != null) span.setStatus(StatusCode.ERROR, error.toString())
        span.end()
    }

    /** Ends the spans of executions whose end was never reported (the run was cancelled). */
    fun endOpen(status: Status) {
        for (key in open.keys.toList()) {
            open.remove(key)?.apply {
                setAttribute(Attr.STATUS, status.name)
                end()
            }
        }
    }

    private companion object {
        const val INTERRUPT_SIGNAL = "dev.trellis.runtime.internal.InterruptSignal"
        const val INTERRUPT_PREFIX = "The node asked for input: "
    }
}
