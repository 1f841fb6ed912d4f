package dev.trellis.functional

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.jackson.JacksonSerializer
import dev.trellis.runtime.RunOptions
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.future.asCompletableFuture
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.Callable
import java.util.concurrent.CompletableFuture
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext

/**
 * What a Java workflow's body ([WorkflowBody]) sees: its durable steps as blocking calls and futures — the Java twin
 * of [WorkflowScope], with the same rules (`docs/semantics.md` §14). A task's result is recorded as JSON by Jackson
 * for the type given. Call it from the body's thread (the thread [WorkflowBody.run] runs on); [charge] from a task.
 */
public class WorkflowContext internal constructor(
    private val scope: WorkflowScope,
    private val body: CoroutineContext,
) {
    /** The run's id. */
    public val runId: String get() = scope.runId

    /** Runs [block] as a durable task [name] whose result is a [type], or returns its recorded result on resume. */
    public fun <T> task(name: String, type: Class<T>, block: Callable<T>): T =
        task(name, type, TaskPolicy.DEFAULT, block)

    /** Runs [block] as a durable task [name] under [policy] (retries, timeout); see [WorkflowScope.task]. */
    public fun <T> task(name: String, type: Class<T>, policy: TaskPolicy, block: Callable<T>): T = blocking {
        scope.task(name, JacksonSerializer.of(type), policy) { callBlocking(block) }
    }

    /**
     * Starts [block] as a durable task [name] running in parallel with the body and returns its future; its position
     * is taken at this call, so parallel tasks keep their identity whatever order they finish in.
     */
    public fun <T> taskAsync(name: String, type: Class<T>, block: Callable<T>): CompletableFuture<T> =
        taskAsync(name, type, TaskPolicy.DEFAULT, block)

    /** Starts [block] as a durable task [name] under [policy]; see [taskAsync]. */
    public fun <T> taskAsync(
        name: String,
        type: Class<T>,
        policy: TaskPolicy,
        block: Callable<T>,
    ): CompletableFuture<T> =
        scope.taskAsync(name, JacksonSerializer.of(type), policy) { callBlocking(block) }.asCompletableFuture()

    /**
     * Pauses the workflow for input, or returns the answer once the run is resumed with one; see
     * [WorkflowScope.interrupt]. The first time it throws the runtime's signal that ends the body: do not catch it.
     */
    public fun interrupt(payload: String): String = blocking { scope.interrupt(payload) }

    /** Streams [payload] to the run's collectors as a custom event; see [WorkflowScope.emit]. */
    public fun emit(payload: Any) {
        blocking { scope.emit(payload) }
    }

    /** Charges [amount] to the run's meter [meter], from inside a task's block; see [WorkflowScope.charge]. */
    public fun charge(meter: String, amount: Double) {
        scope.charge(meter, amount)
    }

    /**
     * Runs [graph] from [input] as a durable task [name] whose result is [output]'s final value; see
     * [WorkflowScope.graphTask].
     */
    @JvmOverloads
    public fun <T> graphTask(
        name: String,
        graph: Graph,
        input: State,
        output: StateKey<T>,
        options: RunOptions = RunOptions.DEFAULT,
    ): T = blocking { scope.graphTask(name, graph, input, output, options) }

    private fun <T> blocking(block: suspend () -> T): T = runBlocking(body) { block() }
}

/** Runs a Java [block] on a thread that may block, interrupted when the task is cancelled; its exception as it is. */
internal suspend fun <T> callBlocking(block: Callable<T>): T = runInterruptible(Dispatchers.IO) {
    try {
        Result.success(block.call())
    } catch (e: InterruptedException) {
        throw e
    } catch (e: Throwable) {
        Result.failure(e)
    }
}.getOrThrow()

/** The Kotlin body of a Java [body]: it runs on a thread that may block, with a [WorkflowContext] of the scope. */
internal fun <I, O> javaBody(body: WorkflowBody<I, O>): suspend WorkflowScope.(I) -> O = { input ->
    val context = WorkflowContext(this, currentCoroutineContext().minusKey(ContinuationInterceptor))
    callBlocking { body.run(context, input) }
}
