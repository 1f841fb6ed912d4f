package dev.trellis.graph

import java.util.Collections
import kotlin.time.Duration

/**
 * Builds an immutable, validated [Graph] of state [schema].
 *
 * ```kotlin
 * val research = graph("research", Research) {
 *     val plan = node("plan") { set(Research.notes, listOf("plan")) }
 *     val write = node("write", timeout = 30.seconds) { update(Research.drafts) { it + 1 } }
 *     start(plan)
 *     plan then write
 *     write.route(write, END) { if (it[Research.drafts] < 3) write else END }
 *     config { maxNodeExecutions = 50 }
 * }
 * ```
 *
 * @throws GraphValidationException listing every problem found, each with how to fix it.
 */
public fun graph(id: String, schema: StateSchema, block: GraphBuilder.() -> Unit): Graph =
    GraphBuilder(id, schema).apply(block).build()

/**
 * The mutable builder behind [graph]. It records declarations; [build] validates them all at once and
 * returns an immutable [Graph].
 */
@TrellisDsl
public class GraphBuilder(
    /** The id of the graph being built. */
    public val id: String,
    /** The state schema of the graph being built. */
    public val schema: StateSchema,
) {
    private val nodes = ArrayList<Node>()
    private val edges = ArrayList<Edge>()
    private val entries = ArrayList<String>()
    private val config = GraphConfigBuilder()

    /** The end of a path: route to it to finish, e.g. `review.route(write, END) { ... }`. */
    @Suppress("PropertyName", "ktlint:standard:property-naming")
    public val END: NodeRef get() = NodeRef.END

    /**
     * Declares a node [id] running [body], with an optional per-attempt [timeout], [retry] policy and
     * [description]; returns a handle for wiring edges.
     */
    public fun node(
        id: String,
        timeout: Duration? = null,
        retry: Retry? = null,
        description: String? = null,
        body: NodeBody,
    ): NodeRef {
        nodes += Node(id, body, timeout, retry, description, nodes.size)
        return NodeRef.of(id)
    }

    /** Makes [nodes] the entry points: they are ready when a run starts. */
    public fun start(vararg nodes: NodeRef) {
        nodes.mapTo(entries) { it.id }
    }

    /** Adds an edge always taken from this node to [target]. */
    public infix fun NodeRef.then(target: NodeRef) {
        edges += Edge.Plain(id, target.id)
    }

    /** Adds an edge from this node to [target], taken when [condition] holds on the merged state. */
    public fun NodeRef.then(target: NodeRef, condition: (State) -> Boolean) {
        edges += Edge.Conditional(id, target.id, condition)
    }

    /** Adds a route from this node: [selector] picks exactly one of [targets] (which may include END). */
    public fun NodeRef.route(vararg targets: NodeRef, selector: (State) -> NodeRef) {
        edges += Edge.Route(id, targets.map { it.id }.frozen(), selector)
    }

    /** Sets limits and defaults of the graph's runs. */
    public fun config(block: GraphConfigBuilder.() -> Unit) {
        config.block()
    }

    /**
     * Validates every declaration and returns the immutable graph.
     *
     * @throws GraphValidationException listing every problem found.
     */
    public fun build(): Graph {
        val problems = ArrayList<String>()
        problems += config.problems()
        val topology = Topology.compile(id, schema, nodes.toList(), edges.toList(), entries.toList(), problems)
        if (problems.isNotEmpty() || topology == null) throw GraphValidationException(id, problems)
        schema.freeze()
        return Graph(id, schema, nodes.frozen(), edges.frozen(), entries.distinct().frozen(), config.build(), topology)
    }
}

/** A read-only copy that Java callers cannot change either. */
private fun <T> List<T>.frozen(): List<T> = Collections.unmodifiableList(toList())
