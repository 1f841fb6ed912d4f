package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Status
import dev.trellis.temporal.internal.Payloads
import dev.trellis.temporal.internal.RunCodec
import io.temporal.api.enums.v1.WorkflowIdReusePolicy
import io.temporal.client.WorkflowClient
import io.temporal.client.WorkflowExecutionAlreadyStarted
import io.temporal.client.WorkflowFailedException
import io.temporal.client.WorkflowOptions
import io.temporal.client.WorkflowStub
import io.temporal.failure.CanceledFailure
import kotlinx.coroutines.future.await
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.util.UUID
import java.util.concurrent.CompletableFuture

/**
 * Starts runs of Trellis graphs on Temporal through a [WorkflowClient]: a run is a workflow execution on
 * [taskQueue] whose workflow id is the run id. Starting a run id that is already running or has run is refused
 * ([IllegalStateException]); [attach] joins it instead.
 *
 * ```kotlin
 * val runner = TemporalRunner(client, "research")
 * val result = runner.invoke(research, stateOf(Research.question to "Why is the sky blue?"))
 * ```
 */
public class TemporalRunner(
    private val client: WorkflowClient,
    private val taskQueue: String,
) {
    /** Starts a run of [graph] from [input] with id [runId] (a random UUID when null) and returns its handle. */
    @JvmOverloads
    public fun start(graph: Graph, input: State = graph.schema.initialState(), runId: String? = null): TemporalRun {
        val id = runId ?: UUID.randomUUID().toString()
        val stub = client.newUntypedWorkflowStub(
            "TrellisGraph",
            WorkflowOptions.newBuilder()
                .setWorkflowId(id)
                .setTaskQueue(taskQueue)
                .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
                .build(),
        )
        try {
            stub.start(RunCodec.encodeRequest(graph, input))
        } catch (e: WorkflowExecutionAlreadyStarted) {
            throw IllegalStateException(
                "Run '$id' already exists on Temporal (a workflow with that id ran or runs); use attach(graph, " +
                    "\"$id\") to follow it, or start with another run id.",
                e,
            )
        }
        return TemporalRun(id, graph, stub)
    }

    /** The handle of the existing run [runId] of [graph] (started by any runner). */
    public fun attach(graph: Graph, runId: String): TemporalRun =
        TemporalRun(runId, graph, client.newUntypedWorkflowStub(runId))

    /** Starts a run of [graph] and suspends until its result. */
    public suspend fun invoke(
        graph: Graph,
        input: State = graph.schema.initialState(),
        runId: String? = null,
    ): TemporalRunResult =
        start(graph, input, runId).await()
}

/** A run on Temporal: wait for its result, cancel it, or query its progress. */
public class TemporalRun internal constructor(
    /** The run's id: its workflow id. */
    public val runId: String,
    private val graph: Graph,
    private val stub: WorkflowStub,
) {
    /** Waits (blocking) for the run's result. */
    public fun awaitBlocking(): TemporalRunResult = try {
        decode(stub.getResult(String::class.java))
    } catch (e: WorkflowFailedException) {
        cancelled(e)
    }

    /** The run's result, when it ends. */
    public fun resultAsync(): CompletableFuture<TemporalRunResult> =
        stub.getResultAsync(String::class.java).handle { text, error ->
            if (error == null) decode(text) else cancelled(error.cause as? WorkflowFailedException ?: error)
        }

    /** The result of a cancelled run: the workflow closed CANCELED, its result is read by query. */
    private fun cancelled(error: Throwable): TemporalRunResult {
        if (error !is WorkflowFailedException || error.cause !is CanceledFailure) throw error
        val text = stub.query("result", String::class.java)
            ?: throw IllegalStateException("Run $runId was cancelled before its workflow recorded a result.", error)
        return decode(text)
    }

    /** Suspends until the run's result. */
    public suspend fun await(): TemporalRunResult = resultAsync().await()

    /** Cancels the run: running nodes are cancelled and the run ends CANCELLED, as a local run does. */
    public fun cancel() {
        stub.cancel()
    }

    /** The run's progress, as JSON: the last event of each node path and the count of events so far. */
    public fun progress(): String = stub.query("progress", String::class.java)

    private fun decode(text: String): TemporalRunResult {
        val obj = Payloads.json.parseToJsonElement(text).jsonObject
        val nodes = obj.getValue("nodes").jsonObject.mapValues { (_, v) ->
            val n = v.jsonObject
            TemporalNodeResult(
                Status.valueOf(n.getValue("status").jsonPrimitive.content),
                n.getValue("executions").jsonPrimitive.int,
                n.getValue("attempts").jsonPrimitive.int,
            )
        }
        val error = obj["error"]?.takeIf { it != JsonNull }?.jsonPrimitive?.content
        return TemporalRunResult(
            runId,
            Status.valueOf(obj.getValue("status").jsonPrimitive.content),
            Payloads.decodeState(graph.schema, obj.getValue("state").jsonObject),
            nodes,
            error,
        )
    }
}
