package dev.trellis.functional

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.Budget
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.retry
import dev.trellis.runtime.stateAt
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import java.math.BigDecimal
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.toJavaDuration

/**
 * One execution of a workflow's body inside the node that runs it ([node]): replays the steps [journal] recorded,
 * records new ones, and checks that the code calls the recorded steps in the recorded order (`docs/semantics.md`
 * §14). What the tasks charged reaches the node's execution once, when the body ends (not when it interrupts).
 */
internal class WorkflowRun<I, O>(
    private val workflow: Workflow<I, O>,
    private val journal: Journal,
    private val node: NodeScope,
    private val budget: Budget?,
    private val random: Random,
) {
    private val calls = AtomicInteger()
    private val emitting = Mutex()
    private val unrecorded = LinkedHashMap<String, BigDecimal>() // charges of tasks that failed: not in the journal
    private val runId: String get() = journal.runId

    /** Runs the body on [input] (or returns the recorded output of a completed run) and records its output. */
    suspend fun execute(input: I): O {
        journal.output?.let {
            chargeNode()
            return Json.decodeFromJsonElement(workflow.output, it)
        }
        val output = try {
            coroutineScope { workflow.body(Scope(this), input) }
        } catch (e: Throwable) {
            if (!isInterrupt(e)) chargeNode()
            throw e
        }
        if (calls.get() < journal.startedCount) {
            chargeNode()
            throw WorkflowNondeterminismException(
                runId,
                calls.get(),
                "Run '$runId' of workflow '${workflow.id}' recorded ${journal.startedCount} steps, but the code now " +
                    "calls only ${calls.get()} (the first one missing is '${journal.startedAt(calls.get())}' at " +
                    "position ${calls.get()}); the code changed since the run started. Finish it with the code it " +
                    "started with, or start a new run.",
            )
        }
        journal.recordOutput(Json.encodeToJsonElement(workflow.output, output))
        chargeNode()
        return output
    }

    /** The runtime's interrupt signal (an internal class of graph-runtime), which must pass through untouched. */
    private fun isInterrupt(e: Throwable) = e.javaClass.name == INTERRUPT_SIGNAL

    private fun chargeNode() {
        val totals = LinkedHashMap(journal.totals())
        synchronized(unrecorded) {
            unrecorded.forEach { (meter, amount) -> totals[meter] = (totals[meter] ?: BigDecimal.ZERO).add(amount) }
        }
        for ((meter, total) in totals) node.charge(meter, total.toDouble())
    }

    private suspend fun emitEvent(payload: Any) = emitting.withLock { node.emit(payload) }

    /** The scope of the body: positions are taken in call order, synchronously, also for parallel tasks. */
    inner class Scope(private val scope: CoroutineScope) : WorkflowScope {
        override val runId: String get() = this@WorkflowRun.runId

        override suspend fun <T> task(
            name: String,
            serializer: KSerializer<T>,
            policy: TaskPolicy,
            block: suspend () -> T,
        ): T = runTask(calls.getAndIncrement(), name, serializer, policy) { block() }

        override fun <T> taskAsync(
            name: String,
            serializer: KSerializer<T>,
            policy: TaskPolicy,
            block: suspend () -> T,
        ): Deferred<T> {
            val position = calls.getAndIncrement()
            return scope.async { runTask(position, name, serializer, policy) { block() } }
        }

        override suspend fun interrupt(payload: String): String {
            check(TaskContext.current.get() == null) {
                "interrupt was called inside task '${TaskContext.current.get()?.name}'; call it between tasks (an " +
                    "interrupt is a step of the workflow, like a task)."
            }
            val position = calls.getAndIncrement()
            checkStep(position, Journal.INTERRUPT)
            journal.answerAt(position)?.let { return it }
            if (journal.startedAt(position) == null) journal.recordInterrupt(position, payload)
            val answer = node.interrupt(payload) // ends the attempt, or returns the answer of a resumed graph run
            journal.recordAnswer(position, answer)
            return answer
        }

        override suspend fun emit(payload: Any) = emitEvent(payload)

        override fun charge(meter: String, amount: Double) {
            val task = checkNotNull(TaskContext.current.get()) {
                "charge('$meter', $amount) was called outside a task: charges are recorded with a task's result, " +
                    "so that a resumed run counts them once. Charge inside the task's block."
            }
            task.charge(meter, amount)
        }

        override suspend fun <T> graphTask(
            name: String,
            graph: Graph,
            input: State,
            output: StateKey<T>,
            options: RunOptions,
        ): T = runTask(calls.getAndIncrement(), name, output.serializer, TaskPolicy.DEFAULT) { position ->
            val childId = options.runId ?: "$runId/$name@$position"
            val checkpointing = options.checkpointing ?: Checkpointing(journal.store, owner = journal.owner)
            GraphTask(graph, childId, options.withRunId(childId, checkpointing), name, position).call(input)[output]
        }
    }

    /**
     * One call of a graph task at [position]: runs the child run [childId] of [graph] to its end, continuing it from
     * its checkpoints when it has some, and turns each of its interrupts into a question of the workflow
     * (`docs/semantics.md` §14, "Interrupts inside a graph task").
     */
    private inner class GraphTask(
        private val graph: Graph,
        private val childId: String,
        private val options: RunOptions,
        private val name: String,
        private val position: Int,
    ) {
        private val store = options.checkpointing!!.store

        /** The child run's final state. */
        suspend fun call(input: State): State {
            while (true) {
                val result = step(input) ?: return graph.stateAt(store, childId, migrations = migrations)
                if (result.status == Status.COMPLETED) return result.state
                check(result.status == Status.INTERRUPTED) {
                    "Graph '${graph.id}' called as task '$name' (run '$childId') ended ${result.status}; a graph " +
                        "called as a task must complete or ask for input."
                }
                val asking = result.interrupts.first()
                val sequence = checkNotNull(store.latest(childId)) { "Run '$childId' has no checkpoint." }.sequence
                journal.recordInterrupt(position, asking.payload, name, asking.path, sequence)
            }
        }

        /**
         * Starts or continues the child run; null when it had completed already (its state is in its checkpoint).
         * A child waiting on the question the journal recorded gets its answer, asked of the workflow when it has
         * none yet: that ends the attempt (the workflow run ends INTERRUPTED), or, in a graph run resumed with an
         * answer for the workflow's node, returns it.
         */
        private suspend fun step(input: State): RunResult? {
            val latest = store.latest(childId) ?: return graph.invoke(input, options)
            val question = journal.question(position)
            return when {
                latest.status == Status.COMPLETED.name -> null
                latest.status == Status.FAILED.name -> graph.retry(childId, options)
                latest.status == Status.INTERRUPTED.name && question?.node != null &&
                    question.childSequence == latest.sequence -> {
                    val answer = journal.answerAt(position)
                        ?: node.interrupt(question.payload).also { journal.recordAnswer(position, it) }
                    graph.resume(childId, options, mapOf(question.node to answer))
                }
                else -> graph.resume(childId, options) // unfinished, or waiting on a question not recorded yet
            }
        }

        private val migrations get() = options.checkpointing!!.migrations
    }

    private fun checkStep(position: Int, name: String) {
        val recorded = journal.startedAt(position)
        if (recorded != null && recorded != name) {
            throw WorkflowNondeterminismException(
                runId,
                position,
                "Run '$runId' of workflow '${workflow.id}' recorded step '$recorded' at position $position, but the " +
                    "code now calls '$name' there; the code changed since the run started. Finish the run with the " +
                    "code it started with, or start a new run (a step's identity is its call order and its name).",
            )
        }
    }

    private suspend fun <T> runTask(
        position: Int,
        name: String,
        serializer: KSerializer<T>,
        policy: TaskPolicy,
        block: suspend (position: Int) -> T,
    ): T {
        checkStep(position, name)
        journal.doneAt(position)?.let {
            emitEvent(TaskEvent.Replayed(name, position))
            return Json.decodeFromJsonElement(serializer, it)
        }
        checkBudget(name)
        if (journal.startedAt(position) == null) journal.recordStart(position, name)
        emitEvent(TaskEvent.Started(name, position))
        val task = TaskContext(name)
        var attempt = 1
        while (true) {
            val outcome = runCatchingAttempt { withContext(task) { attempt(name, policy) { block(position) } } }
            if (outcome.isSuccess) {
                val result = outcome.getOrThrow()
                journal.recordDone(position, name, Json.encodeToJsonElement(serializer, result), task.charges())
                emitEvent(TaskEvent.Completed(name, position, attempt))
                checkBudget(name)
                return result
            }
            val error = outcome.exceptionOrNull()!!
            if (!policy.retry.shouldRetry(error, attempt)) {
                synchronized(unrecorded) {
                    task.charges().forEach { (meter, amount) ->
                        unrecorded[meter] = (unrecorded[meter] ?: BigDecimal.ZERO).add(BigDecimal.valueOf(amount))
                    }
                }
                emitEvent(TaskEvent.Failed(name, position, attempt, error))
                throw error
            }
            val pause = policy.retry.delayBefore(attempt + 1, random)
            emitEvent(TaskEvent.Retrying(name, position, attempt, error, pause.toJavaDuration()))
            delay(pause)
            attempt++
        }
    }

    /** The outcome of one attempt; a cancellation and the runtime's interrupt signal are thrown, not returned. */
    private suspend inline fun <T> runCatchingAttempt(attempt: () -> T): Result<T> = try {
        Result.success(attempt())
    } catch (e: Throwable) {
        if (e is CancellationException || isInterrupt(e)) throw e
        Result.failure(e)
    }

    private suspend fun <T> attempt(name: String, policy: TaskPolicy, block: suspend () -> T): T {
        val timeout = policy.timeout ?: return block()
        return try {
            withTimeout(timeout) { block() }
        } catch (e: TimeoutCancellationException) {
            throw TaskTimeoutException(name, timeout.toJavaDuration())
        }
    }

    private fun checkBudget(task: String) {
        val limits = budget?.meters ?: return
        val totals = journal.totals()
        for ((meter, limit) in limits) {
            val total = totals[meter] ?: continue
            if (total > BigDecimal.valueOf(limit)) {
                throw WorkflowBudgetExceededException(runId, meter, limit, total.toDouble(), task)
            }
        }
    }

    private companion object {
        const val INTERRUPT_SIGNAL = "dev.trellis.runtime.internal.execution.InterruptSignal"
    }
}
