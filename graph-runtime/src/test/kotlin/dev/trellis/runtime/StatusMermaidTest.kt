package dev.trellis.runtime

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

/** `Graph.toMermaid(result)`: each node labelled with its status and count, and styled by its status. */
class StatusMermaidTest {
    object S : StateSchema() {
        val n = key("n", default = 0)
    }

    // `count` loops twice, then the route ends the run; `never` is a route target that is not taken.
    private val loop = graph("status-mermaid", S) {
        val count = node("count") { update(S.n) { it + 1 } }
        val never = node("never") {}
        start(count)
        count.route(count, never, END) { if (it[S.n] < 2) count else END }
        never then END
    }

    @Test
    fun `nodes read their status and count, and are styled by status`(): Unit = runBlocking {
        val drawn = loop.toMermaid(loop.invoke())
        drawn shouldContain "n0[\"count<br/>COMPLETED ×2\"]"
        drawn shouldContain "n1[\"never<br/>PENDING ×0\"]"
        drawn shouldContain "classDef completed fill:#d4f4dd,stroke:#2e7d32"
        drawn shouldContain "class n0 completed"
        drawn shouldContain "class n1 pending"
        drawn shouldNotContain "n0[\"count\"]"
    }
}
