package dev.trellis.temporal.internal

import dev.trellis.graph.Composite
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Node
import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.StateKey
import dev.trellis.temporal.TemporalNodeException
import dev.trellis.temporal.TemporalOptions
import io.temporal.activity.ActivityOptions
import io.temporal.activity.LocalActivityOptions
import io.temporal.common.RetryOptions
import io.temporal.failure.ActivityFailure
import io.temporal.failure.ApplicationFailure
import io.temporal.workflow.ActivityStub
import io.temporal.workflow.Promise
import io.temporal.workflow.Workflow
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import java.time.Duration
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.time.toJavaDuration

/**
 * The run-level interceptor of a run in workflow code: instead of running a plain node's body, it runs one attempt
 * as a [NodeActivity] with the node's state slice and returns the activity's write set. Subgraph and map nodes run
 * in the workflow (their child runs' nodes come back here). Trellis keeps retries and timeouts: the attempt's
 * timeout cancels the activity; Temporal retries an activity only for infrastructure failures (a lost worker).
 * A node that asks for input waits in [interrupts] for the `answer` Update, then runs again with the answer.
 */
internal class ActivityNodes(
    private val graphId: String,
    private val version: Int,
    private val options: TemporalOptions,
    private val interrupts: PendingInterrupts,
    private val keys: LiveKeys,
    /** Told when the last running subgraph or map node ended: the moment a run may drain to continue as new. */
    private val compositesEnded: () -> Unit,
) : NodeInterceptor {
    private val stubs = HashMap<String, ActivityStub>()

    /** Bounds the run's pending activities below Temporal's limit (2,000 per workflow): the others wait their turn. */
    private val slots = Semaphore(options.maxPendingActivities)

    /**
     * How many subgraph and map nodes run now, their child runs in the workflow: a run continues as new only when none
     * does (`Segments.kt`), so that no child run is cut in two.
     */
    var compositesRunning: Int = 0
        private set

    /** The tasks of map nodes with a body run as activities too ([NodeChain.task] ≥ 0). */
    override val wrapsMapTasks: Boolean get() = true

    @OptIn(InternalTrellisApi::class)
    override suspend fun intercept(chain: NodeChain): NodeWrites {
        val node = chain.node
        val composite = node.composite
        // Subgraph nodes, map nodes' own executions and subgraph tasks run in the workflow; their nodes come back here.
        val bodyTask = composite is Composite.Map && composite.body != null && chain.task >= 0
        if (composite != null && !bodyTask) {
            compositesRunning++
            try {
                return chain.proceed()
            } finally {
                if (--compositesRunning == 0) compositesEnded()
            }
        }
        val item = if (bodyTask) itemOf(composite as Composite.Map, chain) else null
        val state = Payloads.encodeState(chain.state, node.slice?.reads)
        val schema = chain.state.schema
        var answer: String? = null
        var emittedBefore = 0
        while (true) {
            val request = LinkedHashMap<String, JsonElement>()
            request["graph"] = JsonPrimitive(graphId)
            request["version"] = JsonPrimitive(version)
            request["path"] = JsonPrimitive(chain.path)
            request["run"] = JsonPrimitive(chain.runId)
            request["attempt"] = JsonPrimitive(chain.attempt)
            request["execution"] = JsonPrimitive(chain.executionCount)
            request["state"] = state
            if (item != null) request["item"] = item
            if (answer != null) request["answer"] = JsonPrimitive(answer)
            if (emittedBefore > 0) request["emittedBefore"] = JsonPrimitive(emittedBefore)
            val text = slots.withPermit { call(stubFor(node), JsonObject(request).toString(), chain) }
            val response = NodeResponse(text) { name ->
                schema.keyOrNull(name) ?: error("Activity of '${chain.path}' wrote unknown key '$name'.")
            }
            for (payload in response.emitted) {
                keys.expect(chain.path, chain.executionCount, chain.attempt, emittedBefore++)
                chain.emit(payload)
            }
            // The attempt's charges count whether it completed or asked for input (`docs/semantics.md` §13.4).
            for ((meter, amount) in response.charges) chain.charge(meter, amount)
            val asked = response.interrupt
            if (asked == null) {
                return NodeWrites.wrap(response.keys.toTypedArray<StateKey<*>>(), response.values.toTypedArray())
            }
            answer = interrupts.await(chain.path, asked)
        }
    }

    /** Task [NodeChain.task]'s item of [map], as a one-item list of the map's `over` key (its serializer's form). */
    private fun itemOf(map: Composite.Map, chain: NodeChain): JsonElement {
        val items = chain.state[map.over]
        return Payloads.encode(map.over, listOf(items[chain.task]))
    }

    /**
     * The activity stub of [node]'s attempts: a local activity for a node [TemporalOptions.localNodes] names, else an
     * activity (heartbeating under [TemporalOptions.heartbeatTimeout]); both with the same timeout and retry mapping.
     */
    private fun stubFor(node: Node): ActivityStub {
        val local = node.id in options.localNodes
        return stubs.getOrPut((if (local) "local:" else "") + (node.timeout?.toString() ?: "")) {
            val timeout = node.timeout?.toJavaDuration()?.plus(options.activityTimeoutMargin) ?: options.activityTimeout
            // Temporal retries only infrastructure failures (a lost worker): a node's own failure is not retryable.
            val retry = RetryOptions.newBuilder().setInitialInterval(
                Duration.ofSeconds(1),
            ).setMaximumAttempts(0).build()
            if (local) {
                Workflow.newUntypedLocalActivityStub(
                    LocalActivityOptions.newBuilder().setStartToCloseTimeout(timeout).setRetryOptions(retry).build(),
                )
            } else {
                val activity = ActivityOptions.newBuilder().setStartToCloseTimeout(timeout).setRetryOptions(retry)
                options.heartbeatTimeout?.let { activity.setHeartbeatTimeout(it) }
                Workflow.newUntypedActivityStub(activity.build())
            }
        }
    }

    private suspend fun call(stub: ActivityStub, request: String, chain: NodeChain): String =
        suspendCancellableCoroutine { cont ->
            var promise: Promise<String>? = null
            val scope = Workflow.newCancellationScope(
                Runnable { promise = stub.executeAsync(NodeActivity.TYPE, String::class.java, request) },
            )
            scope.run()
            promise!!.handle { value, error ->
                if (error == null) cont.resume(value) else cont.resumeWithException(nodeFailure(error, chain))
                null
            }
            cont.invokeOnCancellation { scope.cancel() }
        }

    /**
     * The exception the attempt fails with: the node scope's own errors as the local runtime throws them (a
     * [SliceViolationException], never retried; an [IllegalArgumentException] for a refused write or charge), any
     * other exception of the node as a [TemporalNodeException] of its class name and message.
     */
    private fun nodeFailure(error: RuntimeException, chain: NodeChain): Throwable {
        val cause = (error as? ActivityFailure)?.cause as? ApplicationFailure ?: return error
        val details = cause.details
        // A failed attempt's charges count too (`docs/semantics.md` §13.4): its call was paid for.
        val charged = if (details.size > 0) details.get(details.size - 1, String::class.java) else null
        if (charged != null && charged.startsWith(NodeActivity.CHARGES)) {
            val charges = Payloads.json.parseToJsonElement(charged.removePrefix(NodeActivity.CHARGES)).jsonArray
            for ((meter, amount) in chargesOf(charges)) chain.charge(meter, amount)
        }
        val scopeError = details.size > 0 && details.get(0, String::class.java) == NodeActivity.SCOPE_ERROR
        if (scopeError && cause.type == IllegalArgumentException::class.java.name) {
            return IllegalArgumentException(cause.originalMessage)
        }
        if (scopeError && cause.type == SliceViolationException::class.java.name && details.size >= 3) {
            val key = chain.state.schema.keyOrNull(details.get(1, String::class.java))
            val access = SliceViolationException.Access.valueOf(details.get(2, String::class.java))
            val slice = chain.node.slice
            val declared = if (access == SliceViolationException.Access.READ) slice?.reads else slice?.writes
            if (key != null && declared != null) return SliceViolationException(chain.node.id, key, access, declared)
        }
        return TemporalNodeException(cause.type, cause.originalMessage)
    }
}
