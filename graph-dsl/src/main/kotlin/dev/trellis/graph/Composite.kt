package dev.trellis.graph

import dev.trellis.graph.internal.taskErrorSerializer
import kotlinx.serialization.KSerializer

/**
 * What a subgraph or map node runs, beside its body (`docs/semantics.md` §11). The body of such a node hands its
 * [CompositeScope] (the runtime's node scope) the spec; the runtime runs the child runs or tasks.
 */
@InternalTrellisApi
public sealed class Composite {
    /** The graph of the child runs (a subgraph node, or a map whose tasks are subgraphs), or null. */
    public abstract val graph: Graph?

    /** A subgraph node: one child run of [graph] per attempt, mapped by [mapping]. */
    public class Subgraph internal constructor(
        override val graph: Graph,
        public val mapping: SubgraphMapping,
    ) : Composite()

    /**
     * A map node: one task per item of [over]; a task runs [body] with the item, or a child run of [graph] mapped
     * by [mapping].
     */
    public class Map internal constructor(
        public val over: StateKey<out List<*>>,
        public val maxConcurrency: Int,
        public val onTaskFailure: TaskFailure,
        public val errors: StateKey<List<TaskError>>?,
        public val body: (suspend NodeScope.(item: Any?) -> Unit)?,
        override val graph: Graph?,
        public val mapping: TaskMapping<*>?,
    ) : Composite()
}

/** Implemented by the runtime's node scope: runs the child runs of a subgraph node or the tasks of a map node. */
@InternalTrellisApi
public interface CompositeScope {
    /** Runs one child run of a subgraph node, mapping its input and output. */
    public suspend fun runSubgraph(spec: Composite.Subgraph)

    /** Runs the tasks of a map node and folds their writes in task order. */
    public suspend fun runMap(spec: Composite.Map)
}

/** What a map node does when one of its tasks fails after its retries (`docs/semantics.md` §11). */
public enum class TaskFailure {
    /** The first failed task cancels the running ones and fails the map with its error (the default). */
    FAIL_FAST,

    /** A failed task writes nothing; the others go on; failures are written to the map's `errors` key, if any. */
    COLLECT,
}

/**
 * A failed task of a map node, as written to its `errors` key under [TaskFailure.COLLECT]: serializable
 * ([serializer]), so it is checkpointed like any value. A value: equal to another with the same properties.
 */
public class TaskError(
    /** The task's index in the map's list. */
    public val index: Int,
    /** The error's class name. */
    public val type: String,
    /** The error's message, or null. */
    public val message: String?,
) {
    private fun properties(): List<Any?> = listOf(index, type, message)

    override fun equals(other: Any?): Boolean = other is TaskError && other.properties() == properties()

    override fun hashCode(): Int = properties().hashCode()

    override fun toString(): String = "TaskError(index=$index, type=$type, message=$message)"

    /** The serializer. */
    public companion object {
        /** How task errors are written in checkpoints (kotlinx.serialization), `TaskError.serializer()` from Java. */
        @JvmStatic
        public fun serializer(): KSerializer<TaskError> = taskErrorSerializer
    }
}
