package dev.trellis.functional

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.JavaNodeScope
import dev.trellis.javaapi.NodeAction
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import java.util.function.Function

/**
 * Workflows as nodes of a Java `JavaGraph` (`docs/functional.md`, composition): actions to declare with
 * `blockingNode` (the workflow's call blocks its thread, which the blocking node's executor provides and interrupts
 * when the run is cancelled). They behave as `Workflow.node` does for a Kotlin graph. Needs `trellis-java-facade` on
 * the class path (an optional dependency of this module).
 *
 * ```java
 * builder.blockingNode("review", WorkflowActions.node(APPROVAL, store, outcome, state -> state.get(draft)));
 * ```
 */
public object WorkflowActions {
    /**
     * Runs [workflow] as the body of the node: each execution runs it on what [input] takes from the node's state and
     * writes its output to [output]. Its steps are recorded in [store] as run `<graph run>/<node>#<execution>`, so an
     * execution that runs again (the graph run resumed after a crash, or with an answer to the workflow's interrupt,
     * which pauses the graph run) replays its completed tasks instead of running them.
     */
    @JvmStatic
    @JvmOverloads
    public fun <I, O> node(
        workflow: Workflow<I, O>,
        store: CheckpointStore,
        output: StateKey<O>,
        input: Function<State, I>,
        settings: WorkflowSettings = WorkflowSettings.DEFAULT,
    ): NodeAction = NodeAction { context ->
        // On the IO pool, not this thread's event loop: when the run interrupts this thread, runBlocking throws at
        // once, and the workflow's call, cancelled, still gives up its lease there.
        runBlocking(Dispatchers.IO) {
            workflow.executeAsNode(JavaScopeAsNodeScope(context), store, output, settings) { input.apply(it) }
        }
    }
}

/** The graph model's [NodeScope] of a Java node's [context]: what a workflow's run needs of the node it runs in. */
private class JavaScopeAsNodeScope(private val context: JavaNodeScope) : NodeScope {
    override val runId: String get() = context.runId
    override val nodeId: String get() = context.nodeId
    override val attempt: Int get() = context.attempt
    override val executionCount: Int get() = context.executionCount
    override val state: State get() = context.state

    override fun <T> get(key: StateKey<T>): T = context.get(key)

    override fun <T> set(key: StateKey<T>, value: T) = context.set(key, value)

    override fun <T> update(key: StateKey<T>, transform: (T) -> T) = context.update(key) { transform(it) }

    override suspend fun emit(payload: Any) = context.emit(payload)

    override fun charge(meter: String, amount: Double) = context.charge(meter, amount)

    override fun interrupt(payload: String): String = context.interrupt(payload)
}
