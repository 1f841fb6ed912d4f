package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Budget
import dev.trellis.temporal.internal.RunCodec
import io.temporal.api.enums.v1.WorkflowIdReusePolicy
import io.temporal.client.WorkflowClient
import io.temporal.client.WorkflowExecutionAlreadyStarted
import io.temporal.client.WorkflowOptions
import java.util.UUID

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
public class TemporalRunner @JvmOverloads constructor(
    private val client: WorkflowClient,
    private val taskQueue: String,
    /** The side channel the workers publish events on, for [TemporalRun.events]; null when runs are not streamed. */
    private val liveEvents: LiveEvents? = null,
) {
    /**
     * Starts a run of [graph] from [input] with id [runId] (a random UUID when null) under [budget] (none when null:
     * only the graph's limits, `docs/semantics.md` §13.4) and returns its handle.
     */
    @JvmOverloads
    public fun start(
        graph: Graph,
        input: State = graph.schema.initialState(),
        runId: String? = null,
        budget: Budget? = null,
    ): TemporalRun {
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
            stub.start(RunCodec.encodeRequest(graph, input, budget))
        } catch (e: WorkflowExecutionAlreadyStarted) {
            throw IllegalStateException(
                "Run '$id' already exists on Temporal (a workflow with that id ran or runs); use attach(graph, " +
                    "\"$id\") to follow it, or start with another run id.",
                e,
            )
        }
        // Not bound to the first workflow execution: a run that continues as new goes on in later ones.
        return TemporalRun(id, graph, client.newUntypedWorkflowStub(id), liveEvents, client)
    }

    /** The handle of the existing run [runId] of [graph] (started by any runner). */
    public fun attach(graph: Graph, runId: String): TemporalRun =
        TemporalRun(runId, graph, client.newUntypedWorkflowStub(runId), liveEvents, client)

    /** Starts a run of [graph] and suspends until its result. */
    public suspend fun invoke(
        graph: Graph,
        input: State = graph.schema.initialState(),
        runId: String? = null,
        budget: Budget? = null,
    ): TemporalRunResult =
        start(graph, input, runId, budget).await()
}
