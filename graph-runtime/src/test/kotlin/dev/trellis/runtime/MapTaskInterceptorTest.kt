package dev.trellis.runtime

import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/** Interceptors that also wrap map tasks (`wrapsMapTasks`), `docs/semantics.md` §13.1. */
class MapTaskInterceptorTest {
    object S : StateSchema("intercept-tasks") {
        val items = key("items", default = listOf("a", "b", "c"))
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    object Inner : StateSchema("intercept-tasks-inner") {
        val item = key("item", default = "")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** Records `name path task attempt` for each attempt it wraps into [seen]. */
    private class Recording(
        val name: String,
        val seen: MutableList<String>,
        override val wrapsMapTasks: Boolean,
    ) : NodeInterceptor {
        override suspend fun intercept(chain: NodeChain): NodeWrites {
            seen += "$name ${chain.path} ${chain.task} ${chain.attempt}"
            return chain.proceed()
        }
    }

    private fun recorder(name: String, seen: MutableList<String>, tasks: Boolean) =
        Recording(name, Collections.synchronizedList(seen), tasks)

    @Test
    fun `an interceptor that wraps map tasks sees each attempt of each task, others see the map node once`() = runTest {
        val seen = ArrayList<String>()
        var failures = 0
        val g = graph("tasks", S) {
            val summarize = map("summarize", over = S.items, retry = Retry.fixed(2, 1.seconds)) { item ->
                delay(if (item == "a") 3.seconds else 1.seconds) // tasks end out of order
                if (item == "b" && failures++ == 0) error("flaky b")
                set(S.log, listOf(item))
            }
            start(summarize)
        }
        val result = g.invoke(
            options = RunOptions(interceptors = listOf(recorder("tasks", seen, true), recorder("node", seen, false))),
        )
        result.status shouldBe Status.COMPLETED
        result.state[S.log] shouldBe listOf("a", "b", "c")
        seen shouldContainExactlyInAnyOrder listOf(
            "tasks summarize -1 1",
            "node summarize -1 1",
            "tasks summarize[0] 0 1",
            "tasks summarize[1] 1 1",
            "tasks summarize[1] 1 2",
            "tasks summarize[2] 2 1",
        )
    }

    @Test
    fun `task interceptors of every level wrap in order, and the writes they return are the task's`() = runTest {
        val trace = Collections.synchronizedList(ArrayList<String>())

        fun level(name: String) = object : NodeInterceptor {
            override val wrapsMapTasks = true

            override suspend fun intercept(chain: NodeChain): NodeWrites {
                if (chain.task < 0) return chain.proceed()
                trace += "$name>${chain.path}"
                val writes = chain.proceed()
                trace += "<$name"
                // The outermost one rewrites each task's writes: they are folded in task order all the same.
                return if (name != "run") writes else writes.map(S.log) { it.map { s -> s.uppercase() } }
            }
        }
        val g = graph("levels", S) {
            val summarize = map("summarize", over = S.items, maxConcurrency = 1) { item -> set(S.log, listOf(item)) }
            summarize.intercept(level("node"))
            config { intercept(level("graph")) }
            start(summarize)
        }
        val result = g.invoke(options = RunOptions(interceptors = listOf(level("run"))))
        result.state[S.log] shouldBe listOf("A", "B", "C")
        trace shouldBe listOf("summarize[0]", "summarize[1]", "summarize[2]").flatMap {
            listOf("run>$it", "graph>$it", "node>$it", "<node", "<graph", "<run")
        }
    }

    @Test
    fun `the tasks of a map over a subgraph are wrapped around their child runs`() = runTest {
        val seen = ArrayList<String>()
        val inner = graph("inner", Inner) {
            val fetch = node("fetch") { set(Inner.log, listOf("fetched ${state[Inner.item]}")) }
            start(fetch)
        }
        val g = graph("deep", S) {
            val deep = map("deep", over = S.items, graph = inner) {
                input { set(Inner.item, item) }
                output(Inner.log, S.log)
            }
            start(deep)
        }
        val result = g.invoke(options = RunOptions(interceptors = listOf(recorder("tasks", seen, true))))
        result.state[S.log] shouldBe listOf("fetched a", "fetched b", "fetched c")
        seen shouldContainExactlyInAnyOrder listOf("tasks deep -1 1") +
            (0..2).flatMap { listOf("tasks deep[$it] $it 1", "tasks deep[$it]/fetch -1 1") }
    }
}
