package dev.trellis.functional

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.jackson.JacksonSerializer
import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.future.future
import kotlinx.coroutines.withContext
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.serializer
import java.util.UUID
import java.util.concurrent.CompletableFuture
import kotlin.coroutines.EmptyCoroutineContext

/**
 * A workflow written as ordinary code — loops, ifs, calls — whose steps are durable: each completed task's result is
 * checkpointed through a [CheckpointStore], and a resumed run replays completed tasks from the record instead of
 * running them again (`docs/functional.md`, `docs/semantics.md` §14). A run runs its body as the one node of a graph
 * run, so it has that run's events (`RunEvent`s, the tasks' [TaskEvent]s as custom events), interceptors,
 * instrumentation (tracing) and meters.
 *
 * Kotlin builds one with [workflow], Java with [define]; Kotlin runs it with the suspending [run] and [resume], Java
 * with [runAsync] and [resumeAsync].
 */
public class Workflow<I, O> internal constructor(
    /** The workflow's id, recorded with its runs. */
    public val id: String,
    internal val input: KSerializer<I>,
    internal val output: KSerializer<O>,
    internal val body: suspend WorkflowScope.(I) -> O,
) {
    /** The schema of the graph runs that run the body (no keys: a workflow's data are its steps' records). */
    internal val schema: StateSchema = StateSchema("workflow:$id")

    /**
     * Runs this workflow on [input] as run [runId] of [store], or resumes that run: steps it completed before return
     * their recorded results without running (a resumed run keeps its recorded input); a run that completed returns
     * its recorded output at once.
     *
     * @throws WorkflowInterruptedException when the workflow paused for input; answer with [resume].
     * @throws WorkflowNondeterminismException when the code calls its steps differently from what the run recorded.
     */
    public suspend fun run(
        input: I,
        store: CheckpointStore,
        runId: String = UUID.randomUUID().toString(),
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): O {
        val launch = WorkflowLaunch(this, store, runId, settings)
        return launch.outcome(launch.events(Result.success(input), null), callerContext(settings))
    }

    /**
     * Resumes run [runId] of [store] from its record — after a crash, or with the [answer] to the interrupt it waits
     * on — without needing its input. Like [run] otherwise.
     *
     * @throws IllegalStateException when the store has no record of the run, or [answer] is given and the run waits
     *   for none.
     */
    public suspend fun resume(
        runId: String,
        store: CheckpointStore,
        answer: String? = null,
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): O {
        val launch = WorkflowLaunch(this, store, runId, settings)
        return launch.outcome(launch.events(null, answer), callerContext(settings))
    }

    /**
     * Like [run], as a cold flow of the run's events (each collection is one call of [run]); the terminal event says
     * how it ended. Kotlin-only: Java receives the events through `WorkflowSettings.withEventListener`.
     */
    @JvmSynthetic
    public fun events(
        input: I,
        store: CheckpointStore,
        runId: String = UUID.randomUUID().toString(),
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): Flow<RunEvent> = WorkflowLaunch(this, store, runId, settings).events(Result.success(input), null)

    /** Like [resume], as a cold flow of the resumed run's events (Kotlin-only, like [events]). */
    @JvmSynthetic
    public fun resumeEvents(
        runId: String,
        store: CheckpointStore,
        answer: String? = null,
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): Flow<RunEvent> = WorkflowLaunch(this, store, runId, settings).events(null, answer)

    /**
     * [run] for Java: runs this workflow on [input] as run [runId] of [store] (or resumes it) on the default
     * dispatcher. The future completes with the output, or exceptionally with what [run] throws; cancelling it
     * cancels the run.
     */
    @JvmOverloads
    public fun runAsync(
        input: I,
        store: CheckpointStore,
        runId: String,
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): CompletableFuture<O> {
        val launch = WorkflowLaunch(this, store, runId, settings)
        val caller = callerContext(settings)
        return CoroutineScope(Dispatchers.Default).future {
            launch.outcome(launch.events(Result.success(input), null), caller)
        }
    }

    /** [resume] for Java: resumes run [runId] of [store], with the [answer] to its interrupt when not null. */
    @JvmOverloads
    public fun resumeAsync(
        runId: String,
        store: CheckpointStore,
        answer: String? = null,
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): CompletableFuture<O> {
        val launch = WorkflowLaunch(this, store, runId, settings)
        val caller = callerContext(settings)
        return CoroutineScope(Dispatchers.Default).future { launch.outcome(launch.events(null, answer), caller) }
    }

    /**
     * This workflow as the body of a graph node (`docs/functional.md`, composition): each execution runs the workflow
     * on [input] of the node's state and writes its output to [output]. Its steps are recorded in [store] as run
     * `<graph run>/<node>#<execution>`, so an execution that runs again (the graph run resumed after a crash, or with
     * an answer to the workflow's interrupt, which pauses the graph run) replays its completed tasks.
     */
    @JvmSynthetic
    public fun node(
        store: CheckpointStore,
        output: StateKey<O>,
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
        input: (State) -> I,
    ): NodeBody = { executeAsNode(this, store, output, settings, input) }

    /** Runs one execution of this workflow as the body of node [scope] (see [node]). */
    internal suspend fun executeAsNode(
        scope: NodeScope,
        store: CheckpointStore,
        output: StateKey<O>,
        settings: WorkflowSettings,
        input: (State) -> I,
    ) {
        val journalId = "${scope.runId}/${scope.nodeId}#${scope.executionCount}"
        val journal = Journal.open(store, journalId, settings.owner ?: "workflow/$journalId", id)
        try {
            val actual = journal.input?.let { Json.decodeFromJsonElement(this.input, it) }
                ?: input(scope.state).also { journal.recordInput(Json.encodeToJsonElement(this.input, it)) }
            val budget = settings.budget ?: settings.options.budget
            val run = WorkflowRun(this, journal, scope, budget, settings.options.random)
            scope.set(output, journal.alive { run.execute(actual) })
        } finally {
            withContext(NonCancellable) { journal.close() }
        }
    }

    override fun toString(): String = "Workflow($id)"

    /** The Java way to build a workflow. */
    public companion object {
        /**
         * Builds a workflow [id] whose [body] is Java code (a lambda), with input and output of [inputType] and
         * [outputType] recorded as JSON by Jackson (records, POJOs, enums, strings, numbers).
         *
         * ```java
         * Workflow<String, String> report = Workflow.define("report", String.class, String.class, (flow, topic) -> {
         *     String plan = flow.task("plan", String.class, () -> "plan for " + topic);
         *     return flow.task("write", String.class, () -> plan + ": done");
         * });
         * ```
         */
        @JvmStatic
        public fun <I, O> define(
            id: String,
            inputType: Class<I>,
            outputType: Class<O>,
            body: WorkflowBody<I, O>,
        ): Workflow<I, O> =
            workflow(id, JacksonSerializer.of(inputType), JacksonSerializer.of(outputType), javaBody(body))

        private fun callerContext(settings: WorkflowSettings) =
            settings.instrumentation?.callerContext() ?: EmptyCoroutineContext
    }
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
