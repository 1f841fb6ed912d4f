package dev.trellis.functional

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.Retry
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.onStart
import kotlinx.coroutines.flow.toList
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Inside a workflow: interrupts, retries and timeouts per task, budgets, events, tracing (`docs/semantics.md` §14). */
class WorkflowFeaturesTest : FunSpec({
    val executions = ConcurrentHashMap<String, AtomicInteger>()

    fun ran(name: String) = executions.getOrPut(name) { AtomicInteger() }.incrementAndGet()

    fun count(name: String) = executions[name]?.get() ?: 0

    beforeTest { executions.clear() }

    val review = workflow<String, String>("review") { draft ->
        val checked = task("check") { ran("check").let { draft.trim() } }
        val first = interrupt("Publish '$checked'? (yes/no)")
        val second = if (first == "yes") interrupt("Really? (yes/no)") else "no"
        task("publish") { ran("publish").let { if (second == "yes") "published $checked" else "kept $checked" } }
    }

    test("an interrupt pauses the run; each answer resumes it, completed tasks not run again") {
        val store = InMemoryCheckpointStore()
        val paused = shouldThrow<WorkflowInterruptedException> { review.run(" d1 ", store, "i-1") }
        paused.payload shouldBe "Publish 'd1'? (yes/no)"
        paused.position shouldBe 1
        val again = shouldThrow<WorkflowInterruptedException> { review.resume("i-1", store, answer = "yes") }
        again.payload shouldBe "Really? (yes/no)"
        again.position shouldBe 2
        review.resume("i-1", store, answer = "yes") shouldBe "published d1"
        count("check") shouldBe 1
        count("publish") shouldBe 1
        shouldThrow<IllegalStateException> { review.resume("i-1", store, answer = "no") }
            .message!! shouldContain "waits for no answer"
        shouldThrow<IllegalStateException> { review.resume("nothing", store) }
            .message!! shouldContain "has no record in this store"
    }

    test("retries per task: the attempts until one succeeds, each retry an event; only the success is recorded") {
        val store = InMemoryCheckpointStore()
        val flaky = workflow<Int, Int>("flaky") { n ->
            task("call", TaskPolicy.DEFAULT.withRetry(Retry.fixed(3, 1.milliseconds))) {
                if (ran("call") < 3) error("busy")
                n * 2
            }
        }
        val events = flaky.events(21, store, "r-1").toList()
        count("call") shouldBe 3
        events.filterIsInstance<RunEvent.Custom>().map { it.payload::class.simpleName }
            .shouldContainExactly("Started", "Retrying", "Retrying", "Completed")
        events.last().shouldBeInstanceOf<RunEvent.RunCompleted>()
        flaky.run(0, store, "r-1") shouldBe 42
        count("call") shouldBe 3
        executions.clear()
        val once = workflow<Int, Int>("once") { n ->
            task("call") {
                if (ran("call") < 3) error("busy")
                n
            }
        }
        shouldThrow<IllegalStateException> { once.run(1, InMemoryCheckpointStore(), "r-2") }.message shouldBe "busy"
        count("call") shouldBe 1 // TaskPolicy.DEFAULT: one attempt
    }

    test("a task's timeout cancels its attempt and fails it with TaskTimeoutException, which retries may catch") {
        val slow = workflow<Int, Int>("slow") { n ->
            task("sleep", TaskPolicy.DEFAULT.withTimeout(50.milliseconds).withRetry(Retry.fixed(2, 1.milliseconds))) {
                if (ran("sleep") == 1) delay(60.seconds)
                n
            }
        }
        slow.run(7, InMemoryCheckpointStore(), "t-1") shouldBe 7
        count("sleep") shouldBe 2
        val stuck = workflow<Int, Int>("stuck") { n ->
            task("sleep", TaskPolicy.DEFAULT.withTimeout(50.milliseconds)) { delay(60.seconds).let { n } }
        }
        shouldThrow<TaskTimeoutException> { stuck.run(1, InMemoryCheckpointStore(), "t-2") }.task shouldBe "sleep"
    }

    test("charges are recorded with their task, counted once across a resume, and the budget is checked at task ends") {
        val store = InMemoryCheckpointStore()
        var crash = true
        val spender = workflow<Int, Int>("spender") { n ->
            val parts = (1..n).map { i -> task("call") { charge("tokens", 100.0).let { i } } }
            task("end") {
                if (crash) error("crash")
                parts.sum()
            }
        }
        shouldThrow<IllegalStateException> { spender.run(3, store, "m-1") }
        crash = false
        val events = spender.resumeEvents("m-1", store).toList()
        events.filterIsInstance<RunEvent.MetersCharged>().single().totals shouldBe mapOf("tokens" to 300.0)
        val over = shouldThrow<WorkflowBudgetExceededException> {
            val budget = WorkflowSettings.DEFAULT.withBudget(Budget().withMeter("tokens", 250.0))
            spender.run(5, InMemoryCheckpointStore(), "m-2", budget)
        }
        over.meter shouldBe "tokens"
        over.total shouldBe 300.0
        over.task shouldBe "call"
        shouldThrow<IllegalStateException> {
            workflow<Int, Int>("outside") { n -> charge("usd", 1.0).let { n } }.run(1, InMemoryCheckpointStore())
        }.message!! shouldContain "outside a task"
    }

    test("an interrupt inside a task is refused") {
        val wrong = workflow<Int, String>("wrong") { _ -> task("ask") { interrupt("?") } }
        shouldThrow<IllegalStateException> { wrong.run(1, InMemoryCheckpointStore()) }
            .message!! shouldContain "inside task 'ask'"
    }

    test("events and tracing go through the runtime's instrumentation and interceptors, like a graph run's") {
        val attempts = CopyOnWriteArrayList<String>()
        val graphs = CopyOnWriteArrayList<String>()
        val spy = NodeInterceptor { chain ->
            attempts += "${chain.runId}:${chain.path}"
            chain.proceed()
        }
        val tracing = object : RunInstrumentation {
            override fun instrument(
                graph: Graph,
                options: RunOptions,
                resumedRunId: String?,
                run: (RunOptions) -> Flow<RunEvent>,
            ): Flow<RunEvent> =
                run(options.withInterceptors(listOf(spy) + options.interceptors)).onStart { graphs += graph.id }
        }
        val listened = CopyOnWriteArrayList<RunEvent>()
        val settings = WorkflowSettings.DEFAULT.withInstrumentation(tracing).withEventListener { listened += it }
        val traced = workflow<String, String>("traced") { x ->
            emit("custom $x")
            task("upper") { x.uppercase() }
        }
        traced.run("a", InMemoryCheckpointStore(), "tr-1", settings) shouldBe "A"
        graphs shouldContainExactly listOf("traced")
        attempts shouldContainExactly listOf("tr-1:workflow")
        listened.first().shouldBeInstanceOf<RunEvent.RunStarted>()
        listened.filterIsInstance<RunEvent.Custom>().map { it.payload.toString() }
            .shouldContainExactly("custom a", "Started(upper@0)", "Completed(upper@0)")
        listened.filterIsInstance<RunEvent.NodeStarted>().single().nodeId shouldBe "workflow"
        listened.last().shouldBeInstanceOf<RunEvent.RunCompleted>()
    }
})
