package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.Worker
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.io.IOException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The local runtime's outcomes hold on Temporal: same statuses, counts and final states (docs/temporal.md). */
class TemporalConformanceTest {
    object S : StateSchema("conformance") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val n = key("n", default = 0)
        val error = key<NodeError?>("error", default = null)
    }

    private lateinit var env: TestWorkflowEnvironment
    private lateinit var worker: Worker
    private lateinit var runner: TemporalRunner
    private val executions = ConcurrentHashMap<String, AtomicInteger>()
    private val release = CompletableDeferred<Unit>()
    private val blocked = CountDownLatch(1)

    private fun chain(): Graph = graph("chain", S) {
        val a = node("a") { set(S.log, listOf("a")) }
        val b = node("b") { set(S.n, get(S.n) + 1) }
        val c = node("c") { set(S.log, listOf("c${get(S.n)}")) }
        start(a)
        a then b
        b then c
    }

    private fun diamond(): Graph = graph("diamond", S) {
        val split = node("split") { set(S.log, listOf("split")) }
        val left = node("left") { set(S.log, listOf("left")) }
        val right = node("right") { set(S.log, listOf("right")) }
        val join = node("join") { set(S.n, get(S.log).size) }
        start(split)
        split then left
        split then right
        left then join
        right then join
    }

    private fun loop(): Graph = graph("loop", S) {
        val step = node("step") { set(S.n, get(S.n) + 1) }
        val done = node("done") { set(S.log, listOf("done at ${get(S.n)}")) }
        start(step)
        step.route(step, done) { if (it[S.n] < 5) step else done }
    }

    private fun retries(): Graph = graph("retries", S) {
        val flaky = node("flaky", retry = Retry.fixed(3, 10.milliseconds)) {
            if (attempt < 3) throw IOException("attempt $attempt failed")
            set(S.log, listOf("flaky ok on $attempt"))
        }
        val broken = node("broken", retry = Retry.fixed(2, 10.milliseconds)) { throw IllegalStateException("broken") }
        start(flaky)
        flaky then broken
    }

    private fun routed(): Graph = graph("routed", S) {
        val search = node("search", retry = Retry.fixed(2, 10.milliseconds)) { throw IOException("search is down") }
        val fallback = node("fallback") { set(S.log, listOf("fallback after ${get(S.error)?.attempts}")) }
        start(search)
        search.onFailure(fallback, error = S.error)
    }

    private fun timeout(): Graph = graph("timeout", S) {
        val slow = node("slow", timeout = 2.seconds) {
            blocked.countDown()
            release.await()
        }
        val fallback = node("fallback") { set(S.log, listOf("timed out")) }
        start(slow)
        slow.onFailure(fallback)
    }

    private fun blocking(): Graph = graph("blocking", S) {
        val a = node("a") { set(S.log, listOf("a")) }
        val wait = node("wait") {
            blocked.countDown()
            release.await()
        }
        start(a)
        a then wait
    }

    private val graphs by lazy { listOf(chain(), diamond(), loop(), retries(), routed(), timeout(), blocking()) }

    @BeforeEach
    fun setUp() {
        env = TestWorkflowEnvironment.newInstance()
        worker = env.newWorker(QUEUE)
        TemporalWorkers.register(
            worker,
            graphs,
        ) { path -> executions.getOrPut(path) { AtomicInteger() }.incrementAndGet() }
        env.start()
        runner = TemporalRunner(env.workflowClient, QUEUE)
    }

    @AfterEach
    fun tearDown() {
        release.complete(Unit)
        env.close()
    }

    private fun local(graph: Graph, input: State = graph.schema.initialState()): RunResult = runTestResult {
        try {
            graph.invoke(input)
        } catch (e: GraphRunException) {
            e.result
        }
    }

    private fun assertSame(graph: Graph, input: State = graph.schema.initialState()): TemporalRunResult {
        val expected = local(graph, input)
        val actual = runner.start(graph, input, "run-${graph.id}").awaitBlocking()
        withClue("Temporal run's error: ${actual.error}; local run's error: ${expected.error}") {
            actual.status shouldBe expected.status
        }
        // A remote failure reaches error routes as a TemporalNodeException (docs/temporal.md): same node, message
        // and attempts, another type.
        actual.state.toMap().mapValues { comparable(it.value) } shouldBe
            expected.state.toMap().mapValues { comparable(it.value) }
        actual.nodes.mapValues { it.value.status to it.value.executions } shouldBe
            expected.nodes.mapValues { it.value.status to it.value.executions }
        actual.nodes.mapValues { it.value.attempts } shouldBe expected.nodes.mapValues { it.value.attempts }
        return actual
    }

    @Test
    fun `a chain ends as locally`() {
        val result = assertSame(chain(), stateOf(S.n to 41))
        result.state[S.log] shouldBe listOf("a", "c42")
        executions.keys shouldBe setOf("a", "b", "c")
    }

    @Test
    fun `a diamond fans out and joins as locally`() {
        assertSame(diamond()).state[S.n] shouldBe 3
    }

    @Test
    fun `a loop with a route runs as locally`() {
        val result = assertSame(loop())
        result.node("step").executions shouldBe 5
        executions.getValue("step").get() shouldBe 5
    }

    @Test
    fun `retries and a failing node end as locally`() {
        val result = assertSame(retries())
        result.status shouldBe Status.FAILED
        result.error!! shouldContain "broken"
        executions.getValue("flaky").get() shouldBe 3
        executions.getValue("broken").get() shouldBe 2
    }

    @Test
    fun `an error route takes a remote failure as locally`() {
        assertSame(routed()).state[S.log] shouldBe listOf("fallback after 2")
    }

    @Test
    fun `a node timeout cancels its activity in workflow time`() {
        val result = runner.start(timeout(), runId = "run-timeout").awaitBlocking()
        result.status shouldBe Status.COMPLETED
        result.node("slow").status shouldBe Status.FAILED
        result.state[S.log] shouldBe listOf("timed out")
    }

    @Test
    fun `cancelling a run cancels its running node and ends it CANCELLED`() {
        val run = runner.start(blocking(), runId = "run-cancel")
        blocked.await(60, TimeUnit.SECONDS) shouldBe true
        run.cancel()
        val result = run.awaitBlocking()
        result.status shouldBe Status.CANCELLED
        result.state[S.log] shouldBe listOf("a")
        result.node("wait").status shouldBe Status.CANCELLED
    }

    @Test
    fun `starting a run id twice is refused, attach follows the run`() {
        val first = runner.start(chain(), runId = "run-twice")
        val error = assertThrows<IllegalStateException> { runner.start(chain(), runId = "run-twice") }
        error.message!! shouldContain "attach"
        runner.attach(chain(), "run-twice").awaitBlocking().status shouldBe first.awaitBlocking().status
    }

    @Test
    fun `progress is a query of the running workflow`() {
        val run = runner.start(blocking(), runId = "run-progress")
        blocked.await(60, TimeUnit.SECONDS) shouldBe true
        run.progress() shouldContain "\"wait\":\"NodeStarted\""
        release.complete(Unit)
        run.awaitBlocking().status shouldBe Status.COMPLETED
    }

    // Parallel completions merge in completion order (docs/semantics.md §1), which differs between runtimes: lists of
    // parallel branches' appends compare as multisets.
    private fun comparable(value: Any?): Any? = when (value) {
        is NodeError -> listOf(value.node, value.message, value.attempts)
        is List<*> -> value.map { it.toString() }.sorted()
        else -> value
    }

    private fun <T> runTestResult(block: suspend () -> T): T {
        var out: Result<T>? = null
        runTest { out = runCatching { block() } }
        return out!!.getOrThrow()
    }

    private companion object {
        const val QUEUE = "trellis-conformance"
    }
}
