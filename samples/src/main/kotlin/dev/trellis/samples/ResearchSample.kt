package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.agent.Agent
import dev.trellis.runtime.agent.AgentInput
import dev.trellis.runtime.agent.AgentScope
import dev.trellis.runtime.agent.AgentSnapshot
import dev.trellis.runtime.agent.agentNode
import kotlinx.coroutines.delay
import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

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

/** Plans the research: a fixed plan, after a short think. */
internal class PlannerAgent : Agent {
    override val name: String = "planner"

    override suspend fun call(input: AgentInput, scope: AgentScope): String {
        scope.step("breaking the question into searches")
        delay(120.milliseconds)
        return "search web, papers, news and code; summarise; write; review"
    }
}

/**
 * Writes drafts and remembers what it wrote (conversation state). Agent nodes snapshot and restore that
 * memory around each execution, so every draft starts from a clean conversation: the draft number comes
 * from the graph's state, not from the agent's memory.
 */
internal class WriterAgent : Agent {
    override val name: String = "writer"
    val memory = ArrayList<String>()

    override suspend fun call(input: AgentInput, scope: AgentScope): String {
        memory += input.prompt
        val words = "a clear report with sources citations and a summary".split(' ')
        val draft = StringBuilder()
        for (word in words) {
            delay(15.milliseconds)
            scope.token("$word ")
            draft.append(word).append(' ')
        }
        return draft.toString().trim()
    }

    override fun snapshot(): AgentSnapshot = AgentSnapshot(memory.toList())

    override fun restore(snapshot: AgentSnapshot) {
        memory.clear()
        @Suppress("UNCHECKED_CAST")
        memory += snapshot.value as List<String>
    }
}

/** Reviews a draft: asks for a revision until draft [acceptAt]. */
internal class ReviewerAgent(private val acceptAt: Int) : Agent {
    override val name: String = "reviewer"

    override suspend fun call(input: AgentInput, scope: AgentScope): String {
        delay(80.milliseconds)
        val number = Regex("draft (\\d+)").find(input.prompt)?.groupValues?.get(1)?.toInt() ?: 0
        return if (number >= acceptAt) "ACCEPT draft $number" else "REVISE draft $number: add more sources"
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

    fun graph(tools: Tools, writer: WriterAgent = WriterAgent()): Graph = graph("research", Research) {
        val plan = agentNode("plan", PlannerAgent(), Research.plan) { "Plan research on: ${it[Research.question]}" }
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
        val write = agentNode(
            "write",
            writer,
            Research.draft,
            onReply = { update(Research.drafts) { it + 1 } },
        ) { "Write draft ${it[Research.drafts] + 1} from: ${it[Research.notes]}. Last review: ${it[Research.review]}" }
        val review = agentNode("review", ReviewerAgent(ACCEPT_AT), Research.review) {
            "Review draft ${it[Research.drafts]}: ${it[Research.draft]}"
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
        config {
            maxNodeExecutions = 50
            executionTimeout = 30.seconds
            intercept(tools.meter)
        }
    }

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val tools = Tools()
        val writer = WriterAgent()
        val budget = Budget().withMeter(CostMeter.TOKENS, TOKEN_BUDGET).withMaxNodeExecutions(40)
        val result = runAndCollect(
            graph(tools, writer),
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
                "writer memory after the run: ${writer.memory.size} message(s) (restored after each execution)",
            ),
        )
    }
}
