package dev.trellis.samples

import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.chatNode
import dev.trellis.langchain4j.streamingChatNode
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.delay
import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/** The state of the research workflow. */
internal object Research : StateSchema("research") {
    val question = key<String>("question")
    val plan = key("plan", default = "")
    val findings = key("findings", default = emptyList<String>(), reducer = Reducer.append())
    val notes = key("notes", default = "")
    val draft = key("draft", default = "")
    val drafts = key("drafts", default = 0)
    val review = key("review", default = "")
    val published = key("published", default = "")
    val searchError = key<NodeError?>("searchError", default = null)
}

/** A custom event streamed by the search nodes. */
internal class SearchProgress(val source: String, val message: String) {
    override fun toString(): String = "$source: $message"
}

/** A fake search tool: answers after [latency]; fails its first [failures] calls with an IOException. */
internal class SearchTool(val source: String, private val latency: Duration, private val failures: Int = 0) {
    val calls = AtomicInteger()

    suspend fun search(query: String): List<String> {
        val call = calls.incrementAndGet()
        delay(latency)
        if (call <= failures) throw IOException("$source timed out (simulated, call $call)")
        return listOf("[$source] ${query.take(24)}… finding ${query.length % 7 + 1}")
    }
}

/**
 * The default sample: plan → four parallel searches (one flaky, retried; a search that still fails after its retries
 * falls back through an error route) → collect → write ⇄ review (until accepted or [ResearchSample.MAX_DRAFTS]) →
 * publish.
 */
internal object ResearchSample : Sample {
    override val name: String = "research"
    override val description: String =
        "multi-agent research: plan, 4 parallel searches (one flaky, retried), write/review loop, publish; a cost meter"

    const val MAX_DRAFTS: Int = 4
    const val ACCEPT_AT: Int = 3
    const val QUESTION: String = "Why is the sky blue?"

    /** The run's budget of the cost meter's tokens (`docs/semantics.md` §13.4). */
    const val TOKEN_BUDGET: Double = 20_000.0

    /** The tools of one run of the sample; the news search fails its first [newsFailures] calls. */
    class Tools(newsFailures: Int = 1) {
        val web = SearchTool("web", 300.milliseconds)
        val papers = SearchTool("papers", 450.milliseconds)
        val news = SearchTool("news", 150.milliseconds, failures = newsFailures)
        val code = SearchTool("code", 200.milliseconds)
        val all = listOf(web, papers, news, code)

        /** Meters every node of the run (a graph-level interceptor charging the run's `tokens` meter). */
        val meter = CostMeter()
    }

    fun graph(tools: Tools, models: ResearchModels = ResearchModels.scripted()): Graph = graph("research", Research) {
        // Planning, writing and reviewing are chat nodes of trellis-langchain4j, on the models of `--model`.
        val plan = chatNode("plan", models.chat, Research.plan) {
            listOf(SystemMessage.from(PLANNER), UserMessage.from("Plan research on: ${it[Research.question]}"))
        }
        val searches = tools.all.map { tool ->
            node(
                "search-${tool.source}",
                retry = Retry.exponential(
                    maxAttempts = 3,
                    initialDelay = 100.milliseconds,
                ).retryOn { it is IOException },
            ) {
                emit(SearchProgress(tool.source, "querying (attempt $attempt)"))
                val found = tool.search(get(Research.question))
                emit(SearchProgress(tool.source, "${found.size} result(s)"))
                set(Research.findings, found)
            }
        }
        // A search that still fails after its retries falls back (an error route) instead of failing the run.
        val fallback = node("search-fallback") {
            val failed = get(Research.searchError)!!
            val source = failed.node.removePrefix("search-")
            set(Research.findings, listOf("[$source] unavailable after ${failed.attempts} attempts; no findings"))
        }
        val collect = node("collect") { set(Research.notes, get(Research.findings).sorted().joinToString("; ")) }
        val write = streamingChatNode(
            "write",
            models.streaming,
            Research.draft,
            onResponse = { update(Research.drafts) { it + 1 } },
        ) {
            val prompt =
                "Write draft ${it[Research.drafts] + 1} from: ${it[Research.notes]}. Last review: ${it[Research.review]}"
            listOf(SystemMessage.from(WRITER), UserMessage.from(prompt))
        }
        val review = chatNode("review", models.chat, Research.review) {
            val prompt = "Review draft ${it[Research.drafts]}: ${it[Research.draft]}"
            listOf(
                SystemMessage.from(REVIEWER.replace("{n}", it[Research.drafts].toString())),
                UserMessage.from(prompt),
            )
        }
        val publish = node("publish") {
            delay(50.milliseconds)
            set(
                Research.published,
                "Report on '${get(Research.question)}' (draft ${get(Research.drafts)}): ${get(Research.draft)}",
            )
        }

        start(plan)
        for (search in searches) {
            plan then search
            search then collect
            search.onFailure(fallback, error = Research.searchError)
        }
        fallback then collect
        collect then write
        write then review
        review.route(write, publish) { state ->
            if (state[Research.review].startsWith("ACCEPT") || state[Research.drafts] >= MAX_DRAFTS) publish else write
        }
        // No executionTimeout: the model calls run on the IO pool, where a test's virtual clock does not wait for them
        // (it would jump to the timeout); a real model's calls are bounded by its client's timeout (ResearchModels).
        config {
            maxNodeExecutions = 50
            intercept(tools.meter)
        }
    }

    private const val PLANNER: String =
        "You plan research. Answer with one line: the searches to run, then the steps after them."
    private const val WRITER: String = "You write short research reports from notes, in at most 60 words."
    private const val REVIEWER: String =
        "You review drafts of a research report. Answer with one line: 'ACCEPT draft {n}' when it is good enough " +
            "(from draft $ACCEPT_AT on, accept it), else 'REVISE draft {n}: ' and what to change."

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val tools = Tools()
        val budget = Budget().withMeter(CostMeter.TOKENS, TOKEN_BUDGET).withMaxNodeExecutions(40)
        val graph = context.spec?.let { ResearchSpec.load(it, tools, context.models) } ?: graph(tools, context.models)
        val result = runAndCollect(
            graph,
            stateOf(Research.question to QUESTION),
            context,
            budget = budget,
            onEvent = onEvent,
        )
        return SampleOutcome(
            listOf(result),
            listOf(
                "search tool calls: " + tools.all.joinToString { "${it.source}=${it.calls.get()}" },
                CostMeter.summary(result, TOKEN_BUDGET),
                "models: ${context.models.name}",
            ),
        )
    }
}
