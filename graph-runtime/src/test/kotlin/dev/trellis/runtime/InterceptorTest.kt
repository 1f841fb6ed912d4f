package dev.trellis.runtime

import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.internal.execution.interceptorTable
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.IOException
import kotlin.time.Duration.Companion.seconds

/** Interceptors, `docs/semantics.md` §13. */
class InterceptorTest {
    object S : StateSchema("intercept") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val text = key("text", default = "")
        val n = key("n", default = 0)
    }

    /** An interceptor that logs its [name] around the rest of the chain into [trace]. */
    private fun tracing(name: String, trace: MutableList<String>) = NodeInterceptor { chain ->
        trace += "$name>${chain.nodeId}"
        val writes = chain.proceed()
        trace += "<$name"
        writes
    }

    @Test
    fun `run-level wrap graph-level wrap node-level interceptors, first installed outermost`() = runTest {
        val trace = ArrayList<String>()
        val g = graph("order", S) {
            val a = node("a") { trace += "body" }
            a.intercept(tracing("node1", trace), tracing("node2", trace))
            a.intercept(tracing("node3", trace))
            config { intercept(tracing("graph1", trace), tracing("graph2", trace)) }
            start(a)
        }
        g.invoke(options = RunOptions(interceptors = listOf(tracing("run1", trace), tracing("run2", trace))))
        trace shouldBe listOf(
            "run1>a",
            "run2>a",
            "graph1>a",
            "graph2>a",
            "node1>a",
            "node2>a",
            "node3>a",
            "body",
            "<node3",
            "<node2",
            "<node1",
            "<graph2",
            "<graph1",
            "<run2",
            "<run1",
        )
    }

    @Test
    fun `the chain shows the node, its attempt, its execution count, the run and the input state`() = runTest {
        val seen = ArrayList<String>()
        val g = graph("view", S) {
            val a = node("a", retry = Retry.fixed(2, 1.seconds)) {
                set(S.n, get(S.n) + 1)
                if (attempt == 1) throw IOException("flaky")
            }
            start(a)
            config {
                intercept(
                    NodeInterceptor { chain ->
                        seen += "${chain.runId} ${chain.node.id} ${chain.nodeId} #${chain.executionCount} " +
                            "attempt ${chain.attempt} n=${chain.state[S.n]}"
                        chain.proceed()
                    },
                )
            }
        }
        val result = g.invoke(stateOf(S.n to 5), RunOptions(runId = "r1"))
        result.state[S.n] shouldBe 6
        seen shouldBe listOf("r1 a a #1 attempt 1 n=5", "r1 a a #1 attempt 2 n=5")
    }

    @Test
    fun `an interceptor may change the writes, and what it returns is what the node wrote`() = runTest {
        val g = graph("redact", S) {
            val a = node("a") {
                set(S.text, "secret: 42")
                set(S.log, listOf("a wrote"))
            }
            a.intercept(
                NodeInterceptor { chain ->
                    chain.proceed().map(
                        S.text,
                    ) { it.replace("42", "**") }.without(S.log).with(S.log, listOf("redacted"))
                },
            )
            start(a)
        }
        val result = g.invoke()
        result.state[S.text] shouldBe "secret: **"
        result.state[S.log] shouldBe listOf("redacted")
    }

    @Test
    fun `an interceptor may short-circuit, the body does not run and its writes are the attempt's`() = runTest {
        var bodyRuns = 0
        val g = graph("short", S) {
            val a = node("a") { bodyRuns++ }
            val b = node("b") { set(S.log, listOf("b saw ${get(S.text)}")) }
            a then b
            a.intercept(NodeInterceptor { NodeWrites.of(S.text, "cached") })
            start(a)
        }
        val result = g.invoke()
        bodyRuns shouldBe 0
        result.state[S.log] shouldBe listOf("b saw cached")
    }

    @Test
    fun `proceed may be called several times, each call starting from no writes`() = runTest {
        var bodyRuns = 0
        val g = graph("twice", S) {
            val a = node("a") {
                bodyRuns++
                set(S.log, listOf("run $bodyRuns"))
                set(S.n, get(S.n) + 1) // reads this call's own writes only
            }
            a.intercept(
                NodeInterceptor { chain ->
                    val first = chain.proceed()
                    first[S.n] shouldBe 1
                    chain.proceed()
                },
            )
            start(a)
        }
        val result = g.invoke()
        bodyRuns shouldBe 2
        result.state[S.log] shouldBe listOf("run 2")
        result.state[S.n] shouldBe 1
    }

    @Test
    fun `an interceptor that throws fails the attempt, and the retry loop calls the whole chain again`() = runTest {
        val calls = ArrayList<Int>()
        var bodyRuns = 0
        val g = graph("fail", S) {
            val a = node("a", retry = Retry.fixed(3, 1.seconds)) { bodyRuns++ }
            a.intercept(
                NodeInterceptor { chain ->
                    calls += chain.attempt
                    if (chain.attempt < 3) throw IOException("interceptor refused attempt ${chain.attempt}")
                    chain.proceed()
                },
            )
            start(a)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        calls shouldBe listOf(1, 2, 3)
        bodyRuns shouldBe 1
        run.all<RunEvent.NodeRetrying>().map { it.error.message } shouldBe
            listOf("interceptor refused attempt 1", "interceptor refused attempt 2")
    }

    @Test
    fun `an interceptor's failure is the node's failure, as it is`() = runTest {
        val refusal = IllegalStateException("over budget")
        val g = graph("refuse", S) {
            val a = node("a") { set(S.n, 1) }
            start(a)
            config { intercept(NodeInterceptor { throw refusal }) }
        }
        val e = shouldThrow<GraphRunException> { g.invoke() }
        e.cause shouldBeSameInstanceAs refusal
        e.result.state[S.n] shouldBe 0
    }

    @Test
    fun `a node's timeout covers the whole chain of the attempt`() = runTest {
        val g = graph("slow", S) {
            val a = node("a", timeout = 5.seconds) { set(S.n, 1) }
            a.intercept(
                NodeInterceptor { chain ->
                    delay(10.seconds)
                    chain.proceed()
                },
            )
            start(a)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        run.result.error.shouldBeInstanceOf<NodeTimeoutException>()
    }

    @Test
    fun `with a timeout, the writes an interceptor returns are the attempt's`() = runTest {
        val g = graph("timed", S) {
            val a = node("a", timeout = 5.seconds) { set(S.text, "body") }
            a.intercept(NodeInterceptor { chain -> chain.proceed().without(S.text).with(S.text, "interceptor") })
            start(a)
        }
        g.invoke(options = virtualTime()).state[S.text] shouldBe "interceptor"
    }

    @Test
    fun `interrupts pass through interceptors`() = runTest {
        val trace = ArrayList<String>()
        val g = graph("ask", S) {
            val a = node("a") { set(S.text, interrupt("name?")) }
            a.intercept(tracing("t", trace))
            start(a)
        }
        val result = g.invoke()
        result.status shouldBe Status.INTERRUPTED
        trace shouldBe listOf("t>a")
    }

    @Test
    fun `an interceptor can emit custom events of its node`() = runTest {
        val g = graph("emit", S) {
            val a = node("a") { }
            a.intercept(
                NodeInterceptor { chain ->
                    chain.emit("before ${chain.nodeId}")
                    chain.proceed()
                },
            )
            start(a)
        }
        g.record().all<RunEvent.Custom>().map { it.nodeId to it.payload } shouldBe listOf("a" to "before a")
    }

    @Test
    fun `interceptors on a node that does not exist are a build error naming it`() {
        val e = shouldThrow<dev.trellis.graph.GraphValidationException> {
            graph("bad", S) {
                val a = node("a") { }
                start(a)
                dev.trellis.graph.NodeRef.of("ghost").intercept(NodeInterceptor { it.proceed() })
            }
        }
        e.problems.single() shouldBe
            "intercept: 'ghost' is not a node of this graph; declare it with node(\"ghost\") { } or fix the name."
    }

    @Test
    fun `a run without interceptors has no interceptor table`() {
        val g = graph("plain", S) {
            val a = node("a") { }
            start(a)
        }
        interceptorTable(g, RunOptions.DEFAULT).shouldBeNull()
        interceptorTable(
            g,
            RunOptions(interceptors = listOf(NodeInterceptor { it.proceed() })),
        )!!.single()!!.size shouldBe
            1
    }

    @Test
    fun `a resumed run keeps the run-level interceptors of its options`() = runTest {
        val seen = ArrayList<String>()
        val g = graph("resume-intercepted", S) {
            val ask = node("ask") { set(S.text, interrupt("go?")) }
            start(ask)
        }
        val options = RunOptions(
            runId = "resume-intercepted-1",
            checkpointing = Checkpointing(dev.trellis.checkpoint.InMemoryCheckpointStore()),
            interceptors = listOf(
                NodeInterceptor { chain ->
                    chain.proceed().also {
                        seen +=
                            "${chain.nodeId}#${chain.attempt}"
                    }
                },
            ),
        )
        g.invoke(options = options).status shouldBe Status.INTERRUPTED
        g.resume("resume-intercepted-1", options, "yes").state[S.text] shouldBe "yes"
        seen shouldBe listOf("ask#1")
    }
}
