package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.serialization.Serializable
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

@Serializable
enum class Verdict { Accept, Revise }

object Research : StateSchema() {
    val question = key<String>("question")
    val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
    val drafts = key("drafts", default = 0)
    val verdict = key<Verdict?>("verdict", default = null)
}

class Progress(val message: String)

/** A research graph using most of the DSL: the review decides whether to write again. */
val research: Graph = graph("research", Research) {
    val plan = node("plan") { set(Research.notes, listOf("plan for ${get(Research.question)}")) }
    val search = node("search", retry = Retry.exponential(maxAttempts = 3)) { set(Research.notes, listOf("found")) }
    val write = node("write", timeout = 30.seconds) { update(Research.drafts) { it + 1 } }
    val review = node("review", description = "judges the draft") {
        emit(Progress("reviewing"))
        set(Research.verdict, if (get(Research.drafts) >= 2) Verdict.Accept else Verdict.Revise)
    }

    start(plan)
    plan then search
    search.then(write) { it[Research.notes].isNotEmpty() }
    write then review
    review.route(write, END) { if (it[Research.verdict] == Verdict.Accept) END else write }
    config {
        maxNodeExecutions = 50
        executionTimeout = 5.minutes
        maxConcurrency = 8
    }
}

/** A node scope that applies writes to a state at once, for running node bodies without a runtime. */
private class RecordingScope(override var state: State, override val nodeId: String) : NodeScope {
    val emitted = ArrayList<Any>()
    override val runId: String = "test-run"
    override val attempt: Int = 1
    override val executionCount: Int = 1

    override fun <T> get(key: StateKey<T>): T = state[key]

    override fun <T> set(key: StateKey<T>, value: T) {
        val reducer = key.reducer
        state = state.with(key, if (reducer == null) value else reducer.reduce(state[key], value))
    }

    override fun <T> update(key: StateKey<T>, transform: (T) -> T) = set(key, transform(state[key]))

    override suspend fun emit(payload: Any) {
        emitted += payload
    }

    override fun charge(meter: String, amount: Double) = Unit

    override fun interrupt(payload: String): String = error("interrupt is not supported without a runtime: $payload")
}

class DslExampleTest : FunSpec({

    test("the graph holds its nodes, entry points, schema and config") {
        research.id shouldBe "research"
        research.schema shouldBeSameInstanceAs Research
        research.nodes.map { it.id } shouldBe listOf("plan", "search", "write", "review")
        research.entryPoints shouldBe listOf("plan")
        research.node("write").timeout shouldBe 30.seconds
        research.node("search").retry?.maxAttempts shouldBe 3
        research.node("review").description shouldBe "judges the draft"
        research.node("plan").retry shouldBe null
        research.config.maxNodeExecutions shouldBe 50
        research.config.executionTimeout shouldBe 5.minutes
        research.config.maxConcurrency shouldBe 8
        research.config.failFast shouldBe false
        research.toString() shouldBe "Graph(research, 4 nodes, 4 edges)"
    }

    test("an unknown node id names the graph and lists its nodes") {
        shouldThrow<NoSuchElementException> { research.node("publish") }.message shouldBe
            "Graph 'research' has no node 'publish'. Nodes: plan, search, write, review."
    }

    test("edges keep their kind, order and targets") {
        research.edges.map { it.toString() } shouldBe
            listOf("plan -> search", "search -?> write", "write -> review", "review -> one of [write, __end__]")
        research.edgesFrom("plan").single().shouldBeInstanceOf<Edge.Plain>().to shouldBe "search"
        research.edgesFrom("search").single().shouldBeInstanceOf<Edge.Conditional>()
        research.edgesFrom("review").single().targets shouldBe listOf("write", Graph.END)
        research.edgesFrom("nowhere") shouldBe emptyList()
    }

    test("conditions and routes decide on the state") {
        val condition = research.edgesFrom("search").single() as Edge.Conditional
        condition.condition(Research.initialState()) shouldBe false
        condition.condition(stateOf(Research.notes to listOf("n"))) shouldBe true

        val route = research.edgesFrom("review").single() as Edge.Route
        route.selector(stateOf(Research.verdict to Verdict.Accept)) shouldBe NodeRef.END
        route.selector(stateOf(Research.verdict to Verdict.Revise)) shouldBe NodeRef.of("write")
    }

    test("the review -> write route is the only back edge") {
        research.backEdges shouldBe research.edgesFrom("review")
    }

    test("a graph without cycles has no back edges") {
        graph("dag", Research) {
            val a = node("a") { }
            val b = node("b") { }
            val c = node("c") { }
            start(a)
            a then b
            a then c
            b then c
        }.backEdges shouldBe emptyList()
    }

    test("node bodies run against a node scope") {
        var state = stateOf(Research.question to "Why is the sky blue?")
        val emitted = ArrayList<Any>()
        for (id in listOf("plan", "search", "write", "review", "write", "review")) {
            val scope = RecordingScope(state, id)
            research.node(id).body(scope)
            state = scope.state
            emitted.addAll(scope.emitted)
        }
        state[Research.notes] shouldBe listOf("plan for Why is the sky blue?", "found")
        state[Research.drafts] shouldBe 2
        state[Research.verdict] shouldBe Verdict.Accept
        emitted.map { (it as Progress).message } shouldBe listOf("reviewing", "reviewing")
    }

    test("toMermaid draws nodes, entry, every edge kind and the end") {
        val mermaid = research.toMermaid()
        mermaid.lines().first() shouldBe "flowchart TD"
        mermaid.lines() shouldContainAll listOf(
            "    n0[\"plan\"]",
            "    n3[\"review\"]",
            "    __start__ --> n0",
            "    n0 --> n1",
            "    n1 -. if .-> n2",
            "    n2 --> n3",
            "    n3 -. route .-> n2",
            "    n3 -. route .-> __end__",
            "    __end__([end])",
        )
    }

    test("toMermaid ends nodes without outgoing edges and escapes quotes") {
        val mermaid = graph("quotes", Research) {
            val a = node("say \"hi\"") { }
            start(a)
        }.toMermaid()
        mermaid shouldContain "n0[\"say #quot;hi#quot;\"]"
        mermaid shouldContain "    n0 --> __end__"
    }
})
