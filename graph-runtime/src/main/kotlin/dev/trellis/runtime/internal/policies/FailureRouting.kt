package dev.trellis.runtime.internal.policies

import dev.trellis.graph.Edge
import dev.trellis.graph.NodeError
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.failureRoute
import dev.trellis.runtime.internal.scheduling.postFailed
import kotlinx.coroutines.CancellationException

/**
 * Routes the failure of [execution] to its node's handler (`docs/semantics.md` §13.3) and returns true, or returns
 * false when it is not routed: the node has no error route, the run is already failing, or [error] is a cancellation.
 * A routed failure is reported (`NodeFailed` with `routedTo`, then `EdgeTaken`), written to the route's error key,
 * and leaves one token on the handler's channel from the failed node; the run does not fail.
 */
internal fun Engine.routeFailure(execution: Execution, error: Throwable): Boolean {
    if (position.failed || error is CancellationException) return false
    val route = topology.failureRoute(execution.index) ?: return false
    val edge = route.source as Edge.OnFailure
    val handler = route.targets[0]
    val handlerPath = pathOf(handler)
    postFailed(execution, error, routedTo = handlerPath)
    edge.error?.let { key ->
        val record = NodeError(execution.node.id, error.javaClass.name, error.message, execution.attempt)
        val k = key.index
        val values = currentState.copyValues()
        values[k] = record
        val versions = currentState.copyVersions()
        versions[k] = ++position.version
        currentState = State.fromArrays(graph.schema, values, versions)
        position.lastWriter[k] = execution.node.id
        if (checkpointer?.everyStep == true) checkpointer.recordWrite(k, record)
    }
    outbox.post { seq -> RunEvent.EdgeTaken(runId, seq, now(), execution.path, handlerPath) }
    position.trigger(handler, topology.channels.of(execution.index, handler))
    return true
}
