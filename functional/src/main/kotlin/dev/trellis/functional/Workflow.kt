package dev.trellis.functional

import dev.trellis.checkpoint.CheckpointStore
import kotlinx.coroutines.Deferred
import kotlinx.serialization.KSerializer
import kotlinx.serialization.serializer
import java.util.UUID

/**
 * A workflow written as ordinary code — loops, ifs, calls — whose [WorkflowScope.task] results are durable: each
 * completed task's result is checkpointed through a [CheckpointStore], and a resumed run replays completed tasks from
 * the checkpoints instead of running them again (`docs/functional.md`, `docs/semantics.md` §14).
 *
 * ```kotlin
 * val report = workflow<String, String>("report") { topic ->
 *     val sources = task("search") { search(topic) }              // runs once, even across a crash
 *     val drafts = sources.map { taskAsync("summarize") { summarize(it) } }.map { it.await() }
 *     task("publish") { publish(drafts) }
 * }
 * val text = report.run("the sky", store, runId = "report-1")      // the same call resumes a crashed run
 * ```
 */
public class Workflow<I, O> internal constructor(
    /** The workflow's id, recorded with its runs. */
    public val id: String,
    internal val input: KSerializer<I>,
    internal val output: KSerializer<O>,
    internal val body: suspend WorkflowScope.(I) -> O,
) {
    /**
     * Runs this workflow on [input] as run [runId] of [store], or resumes that run: tasks it completed before return
     * their recorded results without running; a run that completed returns its recorded output at once.
     *
     * @throws WorkflowNondeterminismException when the code calls its tasks in another order than the run recorded.
     */
    public suspend fun run(
        input: I,
        store: CheckpointStore,
        runId: String = UUID.randomUUID().toString(),
        owner: String = "workflow/${UUID.randomUUID()}",
    ): O = WorkflowRun(this, store, runId, owner).execute(input)

    override fun toString(): String = "Workflow($id)"
}

/** Builds a [Workflow] whose input and output are checkpointed with [input] and [output]. */
public fun <I, O> workflow(
    id: String,
    input: KSerializer<I>,
    output: KSerializer<O>,
    body: suspend WorkflowScope.(I) -> O,
): Workflow<I, O> {
    require(id.isNotBlank()) { "A workflow needs an id; pass a name such as \"report\"." }
    return Workflow(id, input, output, body)
}

/** Builds a [Workflow] of serializable input [I] and output [O]. */
public inline fun <reified I, reified O> workflow(
    id: String,
    noinline body: suspend WorkflowScope.(I) -> O,
): Workflow<I, O> = workflow(id, serializer<I>(), serializer<O>(), body)

/**
 * What a workflow's body sees. A task's identity is its **position in call order** (the n-th `task`/`taskAsync`
 * call of the run) together with its name: a resumed run must call the same tasks in the same order, or it fails
 * with [WorkflowNondeterminismException] (`docs/semantics.md` §14).
 */
public interface WorkflowScope {
    /** The run's id. */
    public val runId: String

    /** Runs [block] as a durable task [name], or returns its recorded result when the run is resumed. */
    public suspend fun <T> task(name: String, serializer: KSerializer<T>, block: suspend () -> T): T

    /**
     * Starts [block] as a durable task [name] running in parallel with the body; its position is taken at this call,
     * so parallel tasks keep their identity whatever order they finish in. Await the result to join it.
     */
    public fun <T> taskAsync(name: String, serializer: KSerializer<T>, block: suspend () -> T): Deferred<T>
}

/** Runs [block] as a durable task [name] of a serializable result; see [WorkflowScope.task]. */
public suspend inline fun <reified T> WorkflowScope.task(name: String, noinline block: suspend () -> T): T =
    task(name, serializer<T>(), block)

/** Starts [block] as a durable task [name] of a serializable result; see [WorkflowScope.taskAsync]. */
public inline fun <reified T> WorkflowScope.taskAsync(name: String, noinline block: suspend () -> T): Deferred<T> =
    taskAsync(name, serializer<T>(), block)

/**
 * Thrown when a resumed run's code calls its tasks differently from the run it resumes (a task of another name at a
 * position, or fewer tasks than were recorded): replaying would silently diverge, so the run stops instead.
 */
public class WorkflowNondeterminismException(
    /** The run. */
    public val runId: String,
    /** The position (0-based call order) of the first difference. */
    public val position: Int,
    message: String,
) : IllegalStateException(message)
