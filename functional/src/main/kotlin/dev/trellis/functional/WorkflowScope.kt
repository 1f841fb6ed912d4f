package dev.trellis.functional

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.RunOptions
import kotlinx.coroutines.Deferred
import kotlinx.serialization.KSerializer
import kotlinx.serialization.serializer

/**
 * What a workflow's body sees. Its **steps** — [task], [taskAsync], [interrupt] and [graphTask] calls — are durable;
 * a step's identity is its **position in call order** (the n-th step of the run) together with its name: a resumed
 * run must call the same steps in the same order, or it fails with [WorkflowNondeterminismException]
 * (`docs/semantics.md` §14). The Java twin is [WorkflowContext].
 */
public interface WorkflowScope {
    /** The run's id. */
    public val runId: String

    /**
     * Runs [block] as a durable task [name] under [policy] (retries, timeout), or returns its recorded result when the
     * run is resumed; the result is recorded with [serializer].
     */
    public suspend fun <T> task(
        name: String,
        serializer: KSerializer<T>,
        policy: TaskPolicy = TaskPolicy.DEFAULT,
        block: suspend () -> T,
    ): T

    /**
     * Starts [block] as a durable task [name] running in parallel with the body; its position is taken at this call,
     * so parallel tasks keep their identity whatever order they finish in. Await the result to join it.
     */
    public fun <T> taskAsync(
        name: String,
        serializer: KSerializer<T>,
        policy: TaskPolicy,
        block: suspend () -> T,
    ): Deferred<T>

    /**
     * Pauses the workflow for input: the first time, the run is recorded as waiting with [payload] and ends
     * `INTERRUPTED` (`run` throws [WorkflowInterruptedException]); resumed with an answer (`Workflow.resume`), the
     * body runs again, its completed tasks replayed, and this call returns the answer. A step like a task; call it
     * between tasks, not inside one.
     */
    public suspend fun interrupt(payload: String): String

    /**
     * Streams [payload] to the run's collectors as a `RunEvent.Custom` of the workflow's node. Not durable: code
     * between tasks re-runs on resume and emits again.
     */
    public suspend fun emit(payload: Any)

    /**
     * Charges [amount] to the run's meter [meter] (`"tokens"`, `"usd"`): only inside a task's block, where the charge
     * is recorded with the task's result (a replayed task's charges count once); checked against the budget's limit
     * of the meter when the task ends (`docs/semantics.md` §14).
     *
     * @throws IllegalStateException when called outside a task.
     */
    public fun charge(meter: String, amount: Double)

    /**
     * Runs [graph] from [input] as a durable task [name]: its run completes inside the task, and the value of
     * [output] in its final state is the task's recorded result (a resumed workflow does not run the graph again).
     * The child run's id is this run's id, the task's name and position (`report-1/research@2`) unless [options]
     * names one; it is checkpointed in the workflow's store unless [options] give a `Checkpointing`, so a task that
     * runs again continues the child run instead of starting it over. A child run that asks for input (a node's
     * interrupt) pauses the workflow with its question, as [interrupt] does; the answer resumes the child where it
     * stopped (`docs/semantics.md` §14).
     */
    public suspend fun <T> graphTask(
        name: String,
        graph: Graph,
        input: State,
        output: StateKey<T>,
        options: RunOptions = RunOptions.DEFAULT,
    ): T
}

/** Runs [block] as a durable task [name] of a serializable result; see [WorkflowScope.task]. */
public suspend inline fun <reified T> WorkflowScope.task(
    name: String,
    policy: TaskPolicy = TaskPolicy.DEFAULT,
    noinline block: suspend () -> T,
): T = task(name, serializer<T>(), policy, block)

/** Starts [block] as a durable task [name] of a serializable result; see [WorkflowScope.taskAsync]. */
public inline fun <reified T> WorkflowScope.taskAsync(
    name: String,
    policy: TaskPolicy = TaskPolicy.DEFAULT,
    noinline block: suspend () -> T,
): Deferred<T> = taskAsync(name, serializer<T>(), policy, block)
