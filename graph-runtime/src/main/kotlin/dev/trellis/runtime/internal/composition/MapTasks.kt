package dev.trellis.runtime.internal.composition

import dev.trellis.graph.Composite
import dev.trellis.graph.NodeScope
import dev.trellis.runtime.internal.execution.AttemptScope
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.execution.runIntercepted

/*
 * The tasks of a map node (`docs/semantics.md` §11): executions of the map node's node, one per item, each with its
 * own path (`summarize[3]`), attempts and events; [runMap] starts and folds them.
 */

/**
 * A task of map node execution [owner]: an execution of the map node's node with its own [task] index, attempts and
 * events. Each attempt runs [runTask] through the interceptors that wrap map tasks (the others wrap the map node's
 * own execution), or bare when there are none.
 */
internal abstract class TaskExecution(
    final override val owner: Execution,
    final override val task: Int,
) : Execution(owner.engine, owner.index, owner.number, owner.snapshot) {
    /** Runs one attempt of the task, writing through [scope]. */
    protected abstract suspend fun runTask(scope: NodeScope)

    final override suspend fun invokeBody(scope: AttemptScope) {
        val interceptors = interceptors
        if (interceptors == null) {
            runTask(scope)
        } else {
            val task = this
            runIntercepted(scope, node, { task.runTask(this) }, interceptors)
        }
    }
}

/**
 * A task of a map node whose target is a body: runs it with its [item]. Its path (`summarize[3]`) is made when first
 * asked for — by events, an interrupt — since a map of trivial tasks run without events never needs it.
 */
internal class MapTask(
    owner: Execution,
    task: Int,
    private val item: Any?,
    private val taskBody: suspend NodeScope.(item: Any?) -> Unit,
) : TaskExecution(owner, task) {
    private var taskPath: String? = null

    override val path: String
        get() = taskPath ?: (owner.path + "[" + task + "]").also { taskPath = it }

    override suspend fun runTask(scope: NodeScope) = taskBody(scope, item)
}

/** A task of a map node whose target is a subgraph: a child run at the task's path, mapped in and out. */
internal class SubgraphTask(
    owner: Execution,
    task: Int,
    private val item: Any?,
    private val spec: Composite.Map,
    private val key: String,
) : TaskExecution(owner, task) {
    override val path: String = owner.path + "[" + task + "]"

    /** Runs the task's child run and writes its output through [scope]. */
    override suspend fun runTask(scope: NodeScope) {
        val mapping = spec.mapping!!
        val result = engine.runChild(this, spec.graph!!, "$key[$task]", path, alone = false) {
            mapping.inputFor(owner.state, item, task)
        }
        mapping.applyOutput(scope, result.state)
    }
}
