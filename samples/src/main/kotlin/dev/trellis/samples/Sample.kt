package dev.trellis.samples

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.opentelemetry.TrellisTelemetry
import dev.trellis.runtime.Budget
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import kotlinx.coroutines.CoroutineDispatcher
import kotlin.time.TimeSource

/** A runnable sample: its main logic, separate from how the CLI shows it (so tests can run it). */
internal interface Sample {
    /** The name the CLI takes. */
    val name: String

    /** One line on what it shows. */
    val description: String

    /** Runs the sample; every event of every run goes to [onEvent], in order per run. */
    suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome
}

/**
 * Where samples run their graphs: real time in the CLI, virtual time in tests. [ask] answers an interrupt (the CLI's
 * `--interactive` asks on stdin); null when nobody can answer, and samples then run without interrupting. With
 * [telemetry], the runs started by [runAndCollect] are traced (the CLI's `OTEL_*` variables, [SampleTelemetry]).
 * [models] plan, write and review in the research sample (the CLI's `--model`).
 */
internal class SampleContext(
    private val dispatcher: CoroutineDispatcher? = null,
    private val timeSource: TimeSource = TimeSource.Monotonic,
    val ask: (suspend (Interrupt) -> String)? = null,
    val telemetry: TrellisTelemetry? = null,
    val models: ResearchModels = ResearchModels.scripted(),
    /** Where runs without their own checkpointing save checkpoints (the CLI's `studio` command); null for none. */
    private val store: CheckpointStore? = null,
    /** A graph spec the research sample loads instead of building its graph with the DSL (`--spec`). */
    val spec: java.nio.file.Path? = null,
) {
    fun options(
        runId: String? = null,
        checkpointing: Checkpointing? = null,
        budget: Budget? = null,
    ): RunOptions = RunOptions(
        runId = runId,
        dispatcher = dispatcher,
        timeSource = timeSource,
        checkpointing = checkpointing ?: store?.let { Checkpointing(it, owner = "trellis-samples") },
        budget = budget,
    )

    /** The graphs the sample ran, by id, so the CLI can draw their runs (`--timeline`). */
    val graphs: MutableMap<String, Graph> = java.util.concurrent.ConcurrentHashMap()

    /** Records that [graph] is run (see [graphs]). */
    fun running(graph: Graph): Graph = graph.also { graphs[it.id] = it }
}

/**
 * What a sample did: the result of each of its runs, and lines worth showing after them. [intended] are the ends a
 * sample brings about on purpose (the cancellation sample cancels its run): the command line exits non-zero when a run
 * ends FAILED or CANCELLED otherwise.
 */
internal class SampleOutcome(
    val results: List<RunResult>,
    val notes: List<String> = emptyList(),
    val intended: Set<Status> = emptySet(),
) {
    val result: RunResult get() = results.single()

    /** The runs that ended FAILED or CANCELLED without the sample meaning it. */
    val unsuccessful: List<RunResult>
        get() = results.filter { it.status in UNSUCCESSFUL && it.status !in intended }

    private companion object {
        val UNSUCCESSFUL = setOf(Status.FAILED, Status.CANCELLED)
    }
}

/** Runs [graph] from [input], handing every event to [onEvent], and returns the result of the terminal event. */
internal suspend fun runAndCollect(
    graph: Graph,
    input: State,
    context: SampleContext,
    runId: String? = null,
    budget: Budget? = null,
    onEvent: suspend (RunEvent) -> Unit,
): RunResult {
    var result: RunResult? = null
    context.running(graph)
    val options = context.options(runId, budget = budget)
    val events = context.telemetry?.events(graph, input, options) ?: graph.events(input, options)
    events.collect { event ->
        onEvent(event)
        when (event) {
            is RunEvent.RunCompleted -> result = event.result
            is RunEvent.RunFailed -> result = event.result
            is RunEvent.RunCancelled -> result = event.result
            else -> Unit
        }
    }
    return checkNotNull(result) { "Run of '${graph.id}' ended without a terminal event." }
}

/** Every sample, by name, the default first. */
internal object Samples {
    val all: List<Sample> = listOf(
        ResearchSample,
        BasicsSample,
        RoutingSample,
        FanoutSample,
        MapReduceSample,
        CancellationSample,
        AgentsSample,
        HandoffSample,
        JavaSample,
        TemporalSample,
    )

    const val DEFAULT: String = "research"

    fun named(name: String): Sample? = all.firstOrNull { it.name == name }
}
