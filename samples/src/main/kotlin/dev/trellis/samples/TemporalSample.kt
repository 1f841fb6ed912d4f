package dev.trellis.samples

import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.temporal.InMemoryLiveEvents
import dev.trellis.temporal.TemporalOptions
import dev.trellis.temporal.TemporalRunner
import dev.trellis.temporal.TemporalWorkers
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerOptions

/**
 * `trellis-samples temporal`: the research graph, unchanged, as a Temporal workflow on Temporal's in-process test
 * server (`docs/temporal.md`): each node attempt an activity on a worker, the events streamed to the console live
 * through the side channel (the search nodes' progress while they run).
 */
internal object TemporalSample : Sample {
    override val name: String = "temporal"
    override val description: String =
        "the research graph as a Temporal workflow on an in-process test server, its events streamed live"

    private const val QUEUE = "trellis-samples"

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val graph = context.running(ResearchSample.graph(ResearchSample.Tools(), context.models))
        val live = InMemoryLiveEvents()
        val env = TestWorkflowEnvironment.newInstance()
        try {
            // A workflow task that holds its thread longer than this fails and is replayed; the default (1 s) is short
            // for a crowded machine, and events published by a failed task are not taken back (docs/temporal.md).
            val options = WorkerOptions.newBuilder().setDefaultDeadlockDetectionTimeout(30_000).build()
            val worker = env.newWorker(QUEUE, options)
            TemporalWorkers.register(worker, listOf(graph), TemporalOptions(liveEvents = live))
            env.start()
            val runner = TemporalRunner(env.workflowClient, QUEUE, live)
            val run = runner.start(graph, stateOf(Research.question to ResearchSample.QUESTION))
            var result: RunResult? = null
            run.events().collect { event ->
                onEvent(event)
                if (event is RunEvent.Terminal) result = event.result
            }
            val remote = run.await()
            return SampleOutcome(
                listOf(checkNotNull(result) { "Run ${run.runId} ended without a terminal event." }),
                notes = listOf(
                    "Ran as workflow ${run.runId} on Temporal's test server: ${remote.status}, " +
                        "${remote.nodes.values.sumOf { it.executions }} node executions as activities.",
                ),
            )
        } finally {
            env.close()
        }
    }
}
