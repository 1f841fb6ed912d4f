package dev.trellis.runtime.policies

import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.NoRouteMatchedException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.record
import dev.trellis.runtime.virtualTime
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds

/** First-match routing, `docs/semantics.md` §13.2. */
class RoutingRulesTest {
    object S : StateSchema("routing") {
        val score = key("score", default = 0)
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val error = key<NodeError?>("error", default = null)
    }

    private val tried = ArrayList<String>()

    /** review → high (score ≥ 8) | mid (score ≥ 5) | [ending]; every condition logs that it was tried. */
    private fun reviewGraph(
        ending: dev.trellis.graph.FirstMatchBuilder.(low: Lazy<dev.trellis.graph.NodeRef>) -> Unit,
    ) =
        graph("review", S) {
            val review = node("review") { set(S.log, listOf("review")) }
            val high = node("high") { set(S.log, listOf("high")) }
            val mid = node("mid") { set(S.log, listOf("mid")) }
            val low = lazy { node("low") { set(S.log, listOf("low")) } } // declared only when the ending uses it
            start(review)
            review.firstMatch {
                on(high) {
                    tried += "high"
                    it[S.score] >= 8
                }
                on(mid) {
                    tried += "mid"
                    it[S.score] >= 5
                }
                ending(low)
            }
        }

    @Test
    fun `the first condition that holds wins and the later ones are not tried`() = runTest {
        val g = reviewGraph { otherwise(it.value) }
        val run = g.record(stateOf(S.score to 9), virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("review", "high") // mid also holds (9 ≥ 5): not taken
        tried shouldContainExactly listOf("high")
        run.all<RunEvent.EdgeTaken>().map { it.to } shouldContainExactly listOf("high")
    }

    @Test
    fun `a later condition wins when the earlier ones do not hold`() = runTest {
        val run = reviewGraph { otherwise(it.value) }.record(stateOf(S.score to 6), virtualTime())
        run.result.state[S.log] shouldContainExactly listOf("review", "mid")
        tried shouldContainExactly listOf("high", "mid")
    }

    @Test
    fun `when none holds the default target is taken`() = runTest {
        val run = reviewGraph { otherwise(it.value) }.record(stateOf(S.score to 1), virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("review", "low")
    }

    @Test
    fun `otherwise(END) lets the path end there`() = runTest {
        val g = graph("end", S) {
            val review = node("review") { set(S.log, listOf("review")) }
            val high = node("high") { set(S.log, listOf("high")) }
            start(review)
            review.firstMatch {
                on(high) { it[S.score] >= 8 }
                otherwise(END)
            }
        }
        val run = g.record(stateOf(S.score to 1), virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly listOf("review")
        run.all<RunEvent.EdgeTaken>().map { it.to } shouldContainExactly listOf(Graph.END)
    }

    @Test
    fun `otherwiseFail fails the node with NoRouteMatchedException naming the node and its routes`() = runTest {
        val run = reviewGraph { otherwiseFail() }.record(stateOf(S.score to 1), virtualTime())
        run.result.status shouldBe Status.FAILED
        val error = run.result.error.shouldBeInstanceOf<NoRouteMatchedException>()
        error.nodeId shouldBe "review"
        error.targets shouldContainExactly listOf("high", "mid")
        error.message shouldContain "No route of node 'review' matched"
        error.message shouldContain "[high, mid]"
        error.message shouldContain "otherwise(target)"
        run.result.node("review").status shouldBe Status.FAILED
        run.result.state[S.log] shouldContainExactly listOf("review") // its writes were merged before the decision
        run.all<RunEvent.NodeFailed>().single().nodeId shouldBe "review"
    }

    @Test
    fun `a no-match failure goes to the node's error route like any failure`() = runTest {
        val g = graph("routed", S) {
            val review = node("review") { set(S.log, listOf("review")) }
            val high = node("high") { set(S.log, listOf("high")) }
            val triage = node("triage") { set(S.log, listOf("triage: ${get(S.error)?.type}")) }
            start(review)
            review.firstMatch {
                on(high) { it[S.score] >= 8 }
                otherwiseFail()
            }
            review.onFailure(triage, error = S.error)
        }
        val run = g.record(stateOf(S.score to 1), virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldContainExactly
            listOf("review", "triage: ${NoRouteMatchedException::class.java.name}")
    }

    @Test
    fun `without first-match every conditional edge that holds is taken, and none ends the path silently`() = runTest {
        val g = graph("fanout", S) {
            val review = node("review") { set(S.log, listOf("review")) }
            val a = node("a") { set(S.log, listOf("a")) }
            val b = node("b") { set(S.log, listOf("b")) }
            start(review)
            review.then(a) { it[S.score] >= 5 }
            review.then(b) { it[S.score] >= 5 }
        }
        g.record(stateOf(S.score to 9), virtualTime()).result.state[S.log].sorted() shouldContainExactly
            listOf("a", "b", "review")
        val none = g.record(stateOf(S.score to 1), virtualTime()).result
        none.status shouldBe Status.COMPLETED
        none.state[S.log] shouldContainExactly listOf("review")
    }

    @Test
    fun `build refuses a first-match block that does not say what happens when nothing matches`() {
        val error = shouldThrow<GraphValidationException> { reviewGraph { } }
        error.message shouldContain
            "First-match routing of node 'review' does not say what happens when no condition holds"
        error.message shouldContain "otherwise(END) (the path may end there)"
        error.message shouldContain "otherwiseFail()"
        shouldThrow<GraphValidationException> {
            reviewGraph {
                otherwise(it.value)
                otherwiseFail()
            }
        }.message shouldContain "declares 2 endings (otherwise(low), otherwiseFail()); keep exactly one"
        shouldThrow<GraphValidationException> {
            graph("empty", S) {
                val a = node("a") { }
                start(a)
                a.firstMatch { otherwise(END) }
            }
        }.message shouldContain "First-match routing of node 'a' declares no condition"
    }

    @Test
    fun `the edge model and Mermaid show the order and the default`() {
        val g = reviewGraph { otherwise(it.value) }
        val edge = g.edgesFrom("review").single().shouldBeInstanceOf<Edge.FirstMatch>()
        edge.branches.map { it.to } shouldContainExactly listOf("high", "mid")
        edge.otherwise shouldBe "low"
        edge.targets shouldContainExactly listOf("high", "mid", "low")
        val mermaid = g.toMermaid()
        mermaid shouldContain "n0 -. if 1 .-> n1"
        mermaid shouldContain "n0 -. if 2 .-> n2"
        mermaid shouldContain "n0 -. otherwise .-> n3"
        reviewGraph { otherwiseFail() }.toMermaid() shouldContain "n0 -. if 2 .-> n2"
    }

    object T : StateSchema("timing") {
        val a = key("a", default = 0)
        val b = key("b", default = 0)
        val c = key("c", default = 0)
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** The target the first-match rule must pick for the joined state: a function of the state alone. */
    private fun expected(a: Int, b: Int, c: Int): String = when {
        a + b > 10 -> "big"
        b > c -> "tilted"
        a == c -> "even"
        else -> "rest"
    }

    @Test
    fun `the first-match decision depends only on the state, never on timing`() {
        // A table of inputs; for each, three parallel branches with random virtual durations write a, b and c, and the
        // join decides. Every timing must pick the target the rule picks for that state.
        val random = Random(18)
        for (case in 0 until 40) {
            val (x, y, z) = Triple(random.nextInt(0, 9), random.nextInt(0, 9), random.nextInt(0, 9))
            val want = expected(x, y, z)
            repeat(6) {
                val durations = List(3) { random.nextLong(0, 50).milliseconds }
                val g = graph("timing", T) {
                    val split = node("split") { }
                    val na = node("na") {
                        delay(durations[0])
                        set(T.a, x)
                    }
                    val nb = node("nb") {
                        delay(durations[1])
                        set(T.b, y)
                    }
                    val nc = node("nc") {
                        delay(durations[2])
                        set(T.c, z)
                    }
                    val join = node("join") { }
                    val targets = listOf("big", "tilted", "even", "rest").associateWith { name ->
                        node(name) { set(T.log, listOf(name)) }
                    }
                    start(split)
                    listOf(na, nb, nc).forEach {
                        split then it
                        it then join
                    }
                    join.firstMatch {
                        on(targets.getValue("big")) { it[T.a] + it[T.b] > 10 }
                        on(targets.getValue("tilted")) { it[T.b] > it[T.c] }
                        on(targets.getValue("even")) { it[T.a] == it[T.c] }
                        otherwise(targets.getValue("rest"))
                    }
                }
                runTest {
                    val result = g.record(options = virtualTime()).result
                    result.status shouldBe Status.COMPLETED
                    result.state[T.log] shouldContainExactly listOf(want)
                }
            }
        }
    }
}
