package dev.trellis.temporal

import dev.trellis.graph.CachePolicy
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.string.shouldContain
import io.temporal.testing.TestWorkflowEnvironment
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * Policies that cannot keep their meaning on Temporal are refused when the graph is registered, with the node and
 * what to use instead (`docs/temporal.md`, "Where the meaning differs"), never silently skipped in a run.
 */
class PolicyChecksTest {
    object S : StateSchema("policy-checks") {
        val booking = key("booking", default = "")
    }

    private fun refusal(graph: Graph): String = TestWorkflowEnvironment.newInstance().use { env ->
        assertThrows<IllegalArgumentException> { TemporalWorkers.register(env.newWorker("q"), listOf(graph)) }.message!!
    }

    @Test
    fun `a compensation is refused, naming the node and the error route instead`() {
        val message = refusal(
            graph("trip", S) {
                val book = node("book") { set(S.booking, "b-1") }
                start(book)
                book.compensate { }
            },
        )
        message shouldContain "Node 'book' of graph 'trip' declares a compensation"
        message shouldContain "onFailure"
    }

    @Test
    fun `a node cache is refused, also inside a subgraph`() {
        val child = graph("child", S) {
            val search = node("search", cache = CachePolicy(key = { it[S.booking] })) { set(S.booking, "x") }
            start(search)
        }
        val message = refusal(
            graph("parent", S) {
                val research = subgraph("research", child)
                start(research)
            },
        )
        message shouldContain "Node 'search' of graph 'parent/research' declares a result cache"
        message shouldContain "Remove the cache"
    }
}
