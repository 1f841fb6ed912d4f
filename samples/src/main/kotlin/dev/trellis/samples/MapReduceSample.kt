package dev.trellis.samples

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.resumeEvents
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import java.io.IOException
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The state of the map-reduce workflow: a question, its sub-questions, one finding per sub-question, a report. */
internal object Inquiry : StateSchema("inquiry") {
    val question = key<String>("question")
    val subQuestions = key("subQuestions", default = emptyList<String>())
    val findings = key("findings", default = emptyList<String>(), reducer = Reducer.append())
    val report = key("report", default = "")
}

/** The state of one research child run: its own schema, for one sub-question. */
internal object SubResearch : StateSchema("sub-research") {
    val question = key("question", default = "")
    val sources = key("sources", default = emptyList<String>())
    val summary = key("summary", default = "")
    val verdict = key("verdict", default = "auto-approved")
}

/**
 * Map-reduce research with composition: `plan` splits the question into sub-questions; `research`, a map over a
 * subgraph, runs the research graph (search → summarize → approve) once per sub-question, in parallel; `write` joins
 * the findings, which the map folded in task order whatever order the tasks finished in. The search of one
 * sub-question fails once and is retried inside its child run; with an `ask` in the context (the CLI's
 * `--interactive`), the child run of another sub-question interrupts for approval and the run resumes with the
 * answer, given by the interrupt's path (`research[1]/approve`), from its checkpoints.
 */
internal object MapReduceSample : Sample {
    override val name: String = "mapreduce"
    override val description: String =
        "map-reduce: plan, a research subgraph per sub-question in parallel (one flaky, retried), join in task order"

    const val QUESTION: String = "Why is the sky blue?"

    /** What the planner splits [QUESTION] into, in order. */
    val SUB_QUESTIONS: List<String> = listOf(
        "What is Rayleigh scattering?",
        "How does sunlight's spectrum reach the eye?",
        "Why not violet instead of blue?",
        "Why are sunsets red?",
    )

    /** The sub-question whose search fails once (an IOException) and is retried. */
    const val FLAKY: Int = 2

    /** The sub-question whose child run asks for approval when the sample runs interactively. */
    const val APPROVAL: Int = 1

    /** Search latency per sub-question, in ms: the tasks finish out of order (3, 1, 0, 2 — the flaky one last). */
    private val LATENCY_MS = listOf(420L, 260L, 180L, 120L)

    /** A fake search tool: per sub-question latency; the first call for [FLAKY] times out. */
    class Tools {
        val calls = ConcurrentHashMap<String, AtomicInteger>()

        fun callsFor(index: Int): Int = calls[SUB_QUESTIONS[index]]?.get() ?: 0

        suspend fun search(question: String): List<String> {
            val index = SUB_QUESTIONS.indexOf(question)
            val call = calls.computeIfAbsent(question) { AtomicInteger() }.incrementAndGet()
            delay(LATENCY_MS.getOrElse(index) { 100L }.milliseconds)
            if (index == FLAKY && call == 1) throw IOException("search for sub-question $index timed out (simulated)")
            return listOf(
                "encyclopedia",
                "physics-notes",
                "forum",
            ).take(index % 3 + 1).map { "$it: ${question.take(20)}…" }
        }
    }

    /** The research subgraph for one sub-question; [askFor] is the sub-question whose `approve` node interrupts. */
    fun researchGraph(tools: Tools, askFor: String?): Graph = graph("research", SubResearch) {
        val search = node(
            "search",
            retry = Retry.exponential(maxAttempts = 3, initialDelay = 100.milliseconds).retryOn { it is IOException },
        ) {
            emit("searching (attempt $attempt)")
            set(SubResearch.sources, tools.search(get(SubResearch.question)))
        }
        val summarize = node("summarize") {
            delay(60.milliseconds)
            set(SubResearch.summary, "${get(SubResearch.sources).size} source(s) agree")
        }
        val approve = node("approve") {
            val question = get(SubResearch.question)
            if (question == askFor) set(SubResearch.verdict, interrupt("Include the finding on '$question'? (yes/no)"))
        }
        start(search)
        search then summarize
        summarize then approve
        config { executionTimeout = 30.seconds }
    }

    /** plan → research (a map over [researchGraph], one task per sub-question) → write. */
    fun graph(tools: Tools, askFor: String? = null): Graph = graph("mapreduce", Inquiry) {
        val plan = node("plan") {
            delay(100.milliseconds)
            set(Inquiry.subQuestions, SUB_QUESTIONS)
        }
        val research = map("research", over = Inquiry.subQuestions, graph = researchGraph(tools, askFor)) {
            input { set(SubResearch.question, item) }
            output { child ->
                if (child[SubResearch.verdict] != "no") {
                    set(Inquiry.findings, listOf("${child[SubResearch.question]} ${child[SubResearch.summary]}"))
                }
            }
        }
        val write = node("write") {
            val findings = get(Inquiry.findings).mapIndexed { i, finding -> "${i + 1}. $finding" }
            set(Inquiry.report, "Report on '${get(Inquiry.question)}': " + findings.joinToString(" "))
        }
        start(plan)
        plan then research
        research then write
        config { executionTimeout = 30.seconds }
    }

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val tools = Tools()
        val ask = context.ask
        val graph = graph(tools, askFor = if (ask != null) SUB_QUESTIONS[APPROVAL] else null)
        // Interactive runs pause on the interrupt: they checkpoint, so that resume continues where they stopped.
        val checkpointing = if (ask != null) Checkpointing(InMemoryCheckpointStore()) else null
        val runId = "mapreduce-${UUID.randomUUID()}"
        val finished = ArrayList<Int>()
        val watch: suspend (RunEvent) -> Unit = { event ->
            if (event is RunEvent.NodeCompleted && event.task >= 0 && event.path == "research[${event.task}]") {
                finished += event.task
            }
            onEvent(event)
        }
        val input = stateOf(Inquiry.question to QUESTION)
        var result = collectResult(context.running(graph).events(input, context.options(runId, checkpointing)), watch)
        val asked = ArrayList<String>()
        while (result.status == Status.INTERRUPTED && ask != null) {
            val answers = result.interrupts.associate { it.path to ask(it) }
            answers.forEach { (path, answer) -> asked += "$path -> $answer" }
            result = collectResult(graph.resumeEvents(runId, context.options(null, checkpointing), answers), watch)
        }
        return SampleOutcome(
            listOf(result),
            listOfNotNull(
                "tasks finished in order ${finished.joinToString()}; findings joined in task order",
                "search calls per sub-question: " + SUB_QUESTIONS.indices.joinToString {
                    "[$it]=${tools.callsFor(
                        it,
                    )}"
                },
                "child runs: ${result.children.keys.joinToString()}",
                if (asked.isEmpty()) null else "answered by path: ${asked.joinToString()}",
                "report: ${result.state[Inquiry.report]}",
            ),
        )
    }

    /** Hands every event of [events] to [onEvent] and returns the result of its last (terminal) event. */
    private suspend fun collectResult(events: Flow<RunEvent>, onEvent: suspend (RunEvent) -> Unit): RunResult {
        var result: RunResult? = null
        events.collect { event ->
            onEvent(event)
            when (event) {
                is RunEvent.RunCompleted -> result = event.result
                is RunEvent.RunFailed -> result = event.result
                is RunEvent.RunCancelled -> result = event.result
                is RunEvent.RunInterrupted -> result = event.result
                else -> Unit
            }
        }
        return checkNotNull(result) { "The run ended without a terminal event." }
    }
}
