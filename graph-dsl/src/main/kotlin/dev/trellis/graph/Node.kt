package dev.trellis.graph

import kotlin.time.Duration

/**
 * A node of a built [Graph]: its id, body and options.
 */
public class Node internal constructor(
    /** The node's id, unique in its graph. */
    public val id: String,
    /** What the node does; runs with a [NodeScope] as receiver. */
    public val body: NodeBody,
    /** The node's own timeout per attempt, or null to use the graph's default. */
    @get:JvmSynthetic
    public val timeout: Duration?,
    /** The node's own retry policy, or null to use the graph's default. */
    public val retry: Retry?,
    /** A description for tools and diagrams. */
    public val description: String?,
    /** The node's position in declaration order. */
    @property:InternalTrellisApi public val index: Int,
    /** What a subgraph or map node runs (`docs/semantics.md` §11), or null for a plain node. */
    @property:InternalTrellisApi public val composite: Composite? = null,
    /** The keys the node declared it reads and writes (`docs/semantics.md` §12), or null when it declared neither. */
    public val slice: NodeSlice? = null,
    /** The node's own interceptors, outermost first, inside the run's and the graph's (`docs/semantics.md` §13). */
    public val interceptors: List<NodeInterceptor> = emptyList(),
    /** The node's result cache (`docs/semantics.md` §13.5), or null when its results are not cached. */
    public val cache: CachePolicy? = null,
    /** What undoes a completed execution of this node when the run fails (`docs/semantics.md` §13.6), or null. */
    public val compensation: Compensation? = null,
) {
    /**
     * This node with [interceptors] and [compensation]; the builder's way to attach the policies declared after the
     * node.
     */
    internal fun withPolicies(interceptors: List<NodeInterceptor>, compensation: Compensation?): Node =
        if (interceptors.isEmpty() && compensation == null) {
            this
        } else {
            Node(
                id,
                body,
                timeout,
                retry,
                description,
                index,
                composite,
                slice,
                interceptors,
                cache,
                compensation,
            )
        }

    /** The graph a subgraph node (or a map node whose tasks are subgraphs) runs, or null. */
    public val subgraph: Graph? get() = composite?.graph

    /** Whether this is a map node (dynamic fan-out, `docs/semantics.md` §11). */
    public val isMap: Boolean get() = composite is Composite.Map

    override fun toString(): String = "Node($id)"
}

/**
 * A handle on a node declared in a graph builder, used to wire edges and routes; [Graph.END] ends a path.
 */
public class NodeRef internal constructor(
    /** The id of the node this handle refers to. */
    public val id: String,
) {
    override fun equals(other: Any?): Boolean = this === other || (other is NodeRef && other.id == id)

    override fun hashCode(): Int = id.hashCode()

    override fun toString(): String = if (id == Graph.END) "END" else id

    /** The end of a path. */
    public companion object {
        /** The handle of [Graph.END]. */
        @JvmField
        public val END: NodeRef = NodeRef(Graph.END)

        /** A handle on the node [id]; checked when the graph is built. */
        @JvmStatic
        public fun of(id: String): NodeRef = if (id == Graph.END) END else NodeRef(id)
    }
}

/**
 * An edge of a built [Graph]. When an execution of [from] completes, its edges are decided against the
 * merged state; each edge taken leaves a trigger on its target.
 */
public sealed class Edge {
    /** The node this edge leaves. */
    public abstract val from: String

    /** The nodes this edge may lead to ([Graph.END] included for routes). */
    public abstract val targets: List<String>

    /** An edge always taken: `a then b`. */
    public class Plain internal constructor(override val from: String, public val to: String) : Edge() {
        override val targets: List<String> get() = listOf(to)

        override fun toString(): String = "$from -> $to"
    }

    /** An edge taken when [condition] holds on the merged state; several may be taken at once (fan-out). */
    public class Conditional internal constructor(
        override val from: String,
        public val to: String,
        public val condition: (State) -> Boolean,
    ) : Edge() {
        override val targets: List<String> get() = listOf(to)

        override fun toString(): String = "$from -?> $to"
    }

    /** A route: [selector] picks exactly one of the declared [targets]. */
    public class Route internal constructor(
        override val from: String,
        override val targets: List<String>,
        public val selector: (State) -> NodeRef,
    ) : Edge() {
        override fun toString(): String = "$from -> one of $targets"
    }

    /**
     * First-match routing (`docs/semantics.md` §13.2): the [branches] are tried in order and the first whose condition
     * holds on the merged state is taken; when none holds, [otherwise] is taken ([Graph.END]: the path ends there),
     * or, when it is null, the execution fails with `NoRouteMatchedException`.
     */
    public class FirstMatch internal constructor(
        override val from: String,
        /** The conditions and their targets, in the order they are tried. */
        public val branches: List<Branch>,
        /** The default target ([Graph.END] when the path may end), or null when no match fails the node. */
        public val otherwise: String?,
    ) : Edge() {
        override val targets: List<String> =
            java.util.Collections.unmodifiableList((branches.map { it.to } + listOfNotNull(otherwise)).distinct())

        override fun toString(): String =
            "$from -> first of ${branches.map { it.to }}, otherwise ${otherwise ?: "fail"}"

        /** One condition of a first-match block and the target it leads to. */
        public class Branch internal constructor(
            /** The target taken when [condition] is the first that holds. */
            public val to: String,
            /** The condition, on the merged state. */
            public val condition: (State) -> Boolean,
        ) {
            override fun toString(): String = "-> $to"
        }
    }

    /**
     * An error route (`docs/semantics.md` §13.3): taken only when an execution of [from] fails; the failure goes to
     * [to] instead of failing the run, written to [error] when given.
     */
    public class OnFailure internal constructor(
        override val from: String,
        /** The handler node. */
        public val to: String,
        /** The key the failure is written to, as a [NodeError], or null. */
        public val error: StateKey<out NodeError?>?,
    ) : Edge() {
        override val targets: List<String> get() = listOf(to)

        override fun toString(): String = "$from -(on failure)-> $to"
    }
}
