package dev.trellis.opentelemetry

import dev.trellis.graph.Graph
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
 * after its retries and custom events were added to it.
 *
 * Executions are told apart by their path (`docs/semantics.md` §11). Run-level interceptors also wrap the nodes of
 * child runs, so a node of a subgraph node's child run gets a span whose parent is the subgraph node's span (the
 * span current in its coroutine). It also wraps map tasks ([wrapsMapTasks]): a task's span, a child of its map node's
 * span, is current while each of the task's attempts runs; the nodes of a task's child run are children of the task's
 * span. A task's failures are recorded from its events (retrying, failed), once each.
 */
internal class NodeSpans(
    private val tracer: Tracer,
    private val graph: Graph,
    private val parent: Context,
) : NodeInterceptor {
    @Volatile
    var runId: String? = null

    /** Node executions' spans by path and execution number. */
    private val open = ConcurrentHashMap<String, Span>()

    /** Map tasks' spans by path (`summarize[3]`). */
    private val tasks = ConcurrentHashMap<String, Span>()
    private val interrupted = ConcurrentHashMap.newKeySet<String>()

    private fun key(path: String, execution: Int) = "$path#$execution"

    private fun start(runId: String?, nodeId: String, path: String, execution: Int, parent: Context): Span {
        val builder = tracer.spanBuilder("trellis.node $path")
            .setParent(parent)
            .setSpanKind(SpanKind.INTERNAL)
            .setAttribute(Attr.GRAPH_ID, graph.id)
            .setAttribute(Attr.NODE_ID, nodeId)
            .setAttribute(Attr.EXECUTION, execution.toLong())
        if (path != nodeId) builder.setAttribute(Attr.PATH, path)
        if (runId != null) builder.setAttribute(Attr.RUN_ID, runId)
        return builder.startSpan()
    }

    /** A map task's span; its execution number (the map's) is set from the task's start event ([taskStarted]). */
    private fun startTask(nodeId: String, path: String, parent: Context): Span {
        val builder = tracer.spanBuilder("trellis.task $path")
            .setParent(parent)
            .setSpanKind(SpanKind.INTERNAL)
            .setAttribute(Attr.GRAPH_ID, graph.id)
            .setAttribute(Attr.NODE_ID, nodeId)
            .setAttribute(Attr.PATH, path)
            .setAttribute(Attr.TASK, path.substringAfterLast('[').removeSuffix("]").toLong())
        runId?.let { builder.setAttribute(Attr.RUN_ID, it) }
        return builder.startSpan()
    }

    /**
     * The parent of the span of the execution at [path], from its node's coroutine: the run's span for a node of the
     * run's own graph; for a node of a child run, the span current there (its subgraph node's), or the span of the
     * map task whose child run it is.
     */
    private fun parentOf(path: String): Context {
        if (path.indexOf('/') < 0) return parent
        val current = Context.current()
        val owner = path.substringBeforeLast('/')
        if (!owner.endsWith(']')) return current
        val task = tasks.computeIfAbsent(owner) {
            startTask(owner.substringAfterLast('/').substringBefore('['), owner, current)
        }
        return current.with(task)
    }

    override val wrapsMapTasks: Boolean get() = true

    override suspend fun intercept(chain: NodeChain): NodeWrites {
        if (chain.task >= 0) return interceptTask(chain)
        val path = chain.path
        val key = key(path, chain.executionCount)
        var span = open[key]
        val context: Context
        if (span == null) {
            val parentContext = parentOf(path)
            span = open.computeIfAbsent(key) {
                start(chain.runId, chain.nodeId, path, chain.executionCount, parentContext)
            }
            context = parentContext.with(span)
        } else {
            context = Context.current().with(span)
        }
        span.setAttribute(Attr.ATTEMPT, chain.attempt.toLong())
        try {
            return withContext(context.asContextElement()) { chain.proceed() }
        } catch (e: Throwable) {
            when {
                isInterrupt(e) -> interrupted(span, key, e)
                e !is CancellationException -> span.recordException(
                    e,
                    Attributes.of(Attr.ATTEMPT, chain.attempt.toLong()),
                )
            }
            throw e
        }
    }

    private fun isInterrupt(e: Throwable) = e.javaClass.name == INTERRUPT_SIGNAL

    /** The attempt at [key] asked for input ([signal]): its span gets the payload, its end is reported INTERRUPTED. */
    private fun interrupted(span: Span, key: String, signal: Throwable) {
        interrupted += key
        span.addEvent(
            "trellis.interrupt",
            Attributes.of(Attr.PAYLOAD, signal.message.orEmpty().removePrefix(INTERRUPT_PREFIX)),
        )
    }

    /** The span of the map task at [path] of the map node's [execution], started by its first attempt or event. */
    private fun taskSpan(nodeId: String, path: String, execution: Int): Span = tasks.computeIfAbsent(path) {
        val map = open[key(path.substringBeforeLast('['), execution)]
        startTask(nodeId, path, if (map == null) parent else parent.with(map))
    }

    /** One attempt of a map task, with the task's span current; its failures are recorded from its events. */
    private suspend fun interceptTask(chain: NodeChain): NodeWrites {
        val path = chain.path
        val span = taskSpan(chain.nodeId, path, chain.executionCount)
        span.setAttribute(Attr.ATTEMPT, chain.attempt.toLong())
        try {
            return withContext(Context.current().with(span).asContextElement()) { chain.proceed() }
        } catch (e: Throwable) {
            if (isInterrupt(e)) interrupted(span, key(path, chain.executionCount), e)
            throw e
        }
    }

    /** The span of the execution or map task [event] is about, if open. */
    private fun spanOf(event: RunEvent.NodeEvent): Span? =
        if (event.task >= 0) tasks[event.path] else open[key(event.path, event.execution)]

    /** A map task started: its span, a child of its map node's span (unless a node of its child run made it). */
    fun taskStarted(event: RunEvent.NodeStarted) {
        taskSpan(event.nodeId, event.path, event.execution).setAttribute(Attr.EXECUTION, event.execution.toLong())
    }

    fun retrying(event: RunEvent.NodeRetrying) {
        val span = spanOf(event) ?: return
        // A node's failed attempts are recorded by intercept; a map task's are known from its events only.
        if (event.task >= 0) span.recordException(event.error, Attributes.of(Attr.ATTEMPT, event.attempt.toLong()))
        span.addEvent(
            "trellis.retry",
            Attributes.of(Attr.ATTEMPT, event.attempt.toLong(), Attr.DELAY_MS, event.delay.toMillis()),
        )
    }

    fun custom(event: RunEvent.Custom) {
        val payload = event.payload as? SpanEventPayload ?: return
        spanOf(event)?.addEvent(payload.spanEventName(), payload.spanEventAttributes())
    }

    /** The status of an execution reported cancelled: INTERRUPTED when its node asked for input. */
    fun cancelledStatus(event: RunEvent.NodeEvent): Status =
        if (interrupted.remove(key(event.path, event.execution))) Status.INTERRUPTED else Status.CANCELLED

    fun ended(event: RunEvent.NodeEvent, status: Status, attempts: Int, error: Throwable?) {
        val span = if (event.task >= 0) {
            tasks.remove(event.path)
        } else {
            // An execution cancelled before its first attempt gets a span in the run's own graph only.
            open.remove(key(event.path, event.execution)) ?: if (event.path != event.nodeId) {
                null
            } else {
                start(runId, event.nodeId, event.path, event.execution, parent)
            }
        } ?: return
        span.setAttribute(Attr.STATUS, status.name)
        if (attempts > 0) span.setAttribute(Attr.ATTEMPT, attempts.toLong())
        if (error != null) {
            if (event.task >= 0) span.recordException(error)
            span.setStatus(StatusCode.ERROR, error.toString())
        }
        span.end()
    }

    /** Ends the spans of executions and tasks whose end was never reported (the run was cancelled). */
    fun endOpen(status: Status) {
        for (spans in listOf(tasks, open)) {
            for (key in spans.keys.toList()) {
                spans.remove(key)?.apply {
                    setAttribute(Attr.STATUS, status.name)
                    end()
                }
            }
        }
    }

    private companion object {
        const val INTERRUPT_SIGNAL = "dev.trellis.runtime.internal.execution.InterruptSignal"
        const val INTERRUPT_PREFIX = "The node asked for input: "
    }
}
