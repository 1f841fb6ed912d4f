package dev.trellis.temporal.internal

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Node
import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.StateKey
import dev.trellis.temporal.TemporalNodeException
import dev.trellis.temporal.TemporalOptions
import io.temporal.activity.ActivityOptions
import io.temporal.common.RetryOptions
import io.temporal.failure.ActivityFailure
import io.temporal.failure.ApplicationFailure
import io.temporal.workflow.ActivityStub
import io.temporal.workflow.Promise
import io.temporal.workflow.Workflow
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import java.time.Duration
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.time.toJavaDuration

/**
 * The run-level interceptor of a run in workflow code: instead of running a plain node's body, it runs one attempt
 * as a [NodeActivity] with the node's state slice and returns the activity's write set. Subgraph and map nodes run
 * in the workflow (their child runs' nodes come back here). Trellis keeps retries and timeouts: the attempt's
 * timeout cancels the activity; Temporal retries an activity only for infrastructure failures (a lost worker).
 */
internal class ActivityNodes(
    private val graphId: String,
    private val options: TemporalOptions,
) : NodeInterceptor {
    private val stubs = HashMap<String, ActivityStub>()

    @OptIn(InternalTrellisApi::class)
    override suspend fun intercept(chain: NodeChain): NodeWrites {
        val node = chain.node
        if (node.composite != null) return chain.proceed()
        val request = JsonObject(
            mapOf(
                "graph" to JsonPrimitive(graphId),
                "path" to JsonPrimitive(chain.path),
                "run" to JsonPrimitive(chain.runId),
                "attempt" to JsonPrimitive(chain.attempt),
                "execution" to JsonPrimitive(chain.executionCount),
                "state" to Payloads.encodeState(chain.state, node.slice?.reads),
            ),
        ).toString()
        val schema = chain.state.schema
        val response = NodeResponse(call(stubFor(node), request)) { name ->
            schema.keyOrNull(name) ?: error("Activity of '${chain.path}' wrote unknown key '$name'.")
        }
        for ((meter, amount) in response.meters) chain.charge(meter, amount)
        for (payload in response.emitted) chain.emit(payload)
        return NodeWrites.wrap(response.keys.toTypedArray<StateKey<*>>(), response.values.toTypedArray())
    }

    private fun stubFor(node: Node): ActivityStub = stubs.getOrPut(node.timeout?.toString() ?: "") {
        val timeout = node.timeout?.toJavaDuration()?.plus(options.activityTimeoutMargin) ?: options.activityTimeout
        Workflow.newUntypedActivityStub(
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(timeout)
                .setRetryOptions(
                    RetryOptions.newBuilder()
                        .setInitialInterval(Duration.ofSeconds(1))
                        .setMaximumAttempts(0)
                        .build(),
                )
                .build(),
        )
    }

    private suspend fun call(stub: ActivityStub, request: String): String = suspendCancellableCoroutine { cont ->
        var promise: Promise<String>? = null
        val scope = Workflow.newCancellationScope(
            Runnable { promise = stub.executeAsync(NodeActivity.TYPE, String::class.java, request) },
        )
        scope.run()
        promise!!.handle { value, error ->
            if (error == null) cont.resume(value) else cont.resumeWithException(nodeFailure(error))
            null
        }
        cont.invokeOnCancellation { scope.cancel() }
    }

    private fun nodeFailure(error: RuntimeException): Throwable {
        val cause = (error as? ActivityFailure)?.cause
        return if (cause is ApplicationFailure) TemporalNodeException(cause.type, cause.originalMessage) else error
    }
}
