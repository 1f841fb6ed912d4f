package dev.trellis.graph

import dev.trellis.graph.internal.BuildNames
import java.util.Collections

/**
 * The compiled form of a graph that the runtime executes: nodes by index, edges by source node, and the input
 * channels of every node with the bit sets of their feeders ([InputChannels]), which the readiness rule of
 * `docs/semantics.md` §5 reads. The back edges (edges that close a cycle in a depth-first walk from the entry
 * points) are classified for display; readiness does not use them.
 */
@InternalTrellisApi
public class Topology private constructor(
    /** Nodes by index (declaration order). */
    public val nodes: Array<Node>,
    /** Indices of the entry points. */
    public val entries: IntArray,
    /** The compiled edges leaving each node, in declaration order. */
    public val outgoing: Array<Array<CompiledEdge>>,
    /** The input channels of every node and their feeders. */
    public val channels: InputChannels,
    /** The edges that close a cycle. */
    public val backEdges: List<Edge>,
    private val indexById: Map<String, Int>,
    /** The schema's keys by index. */
    public val keys: Array<StateKey<*>>,
) {
    /** The number of nodes. */
    public val size: Int get() = nodes.size

    /** The index of node [id], or -1 (also for [Graph.END]). */
    public fun indexOf(id: String): Int = indexById[id] ?: -1

    internal companion object {
        fun compile(
            graphId: String,
            schema: StateSchema,
            nodes: List<Node>,
            edges: List<Edge>,
            entries: List<String>,
            problems: MutableList<String>,
        ): Topology? {
            val start = problems.size
            checkSchema(schema, problems)
            val indexById = checkNodes(nodes, schema, problems)
            val known = { id: String -> indexById.containsKey(id) }
            val nodeList = nodes.joinToString { it.id }
            if (entries.isEmpty()) {
                problems += "Graph '$graphId' has no entry point; call start(node) with the node(s) that run first."
            }
            for (entry in entries) {
                when {
                    entry == Graph.END ->
                        problems +=
                            "END cannot be an entry point; start(...) takes the node(s) that run first."
                    !known(entry) ->
                        problems +=
                            "Entry point '$entry' is not a node of this graph; declare it with " +
                            "${BuildNames.node(entry)} or fix the name. Nodes: $nodeList."
                }
            }
            checkEdges(edges, known, nodeList, problems)
            // Reachability needs every reference resolved; other problems must not hide unreachable nodes.
            val resolvable = indexById.size == nodes.size && entries.isNotEmpty() && entries.all(known) &&
                edges.all { e -> known(e.from) && e.targets.all { it == Graph.END || known(it) } }
            if (!resolvable) return null

            val n = nodes.size
            val successors = Array(n) { ArrayList<Int>() }
            val compiled = Array(n) { ArrayList<CompiledEdge>() }
            for (edge in edges) {
                val from = indexById.getValue(edge.from)
                val targets = edge.targets.map { if (it == Graph.END) -1 else indexById.getValue(it) }
                targets.filter { it >= 0 }.forEach { if (it !in successors[from]) successors[from] += it }
                compiled[from] += CompiledEdge.of(edge, targets.toIntArray())
            }
            val entryIdx = entries.distinct().map { indexById.getValue(it) }.toIntArray()
            val reached = reachable(entryIdx, successors)
            for (i in 0 until n) {
                if (!reached[i]) {
                    problems +=
                        "Node '${nodes[i].id}' is unreachable from the entry points ${entries.distinct()}; add an edge or route to it, or remove it."
                }
            }
            if (problems.size > start) return null
            val back = backEdgePairs(entryIdx, successors)
            val backEdges = markBackEdges(back, compiled)
            return Topology(
                nodes = nodes.toTypedArray(),
                entries = entryIdx,
                outgoing = Array(n) { compiled[it].toTypedArray() },
                channels = InputChannels.of(successors),
                backEdges = backEdges,
                indexById = indexById,
                keys = schema.keys.toTypedArray(),
            )
        }

        private fun checkSchema(schema: StateSchema, problems: MutableList<String>) {
            for ((name, count) in schema.duplicateKeyNames()) {
                problems +=
                    "State schema '${schema.name}' declares key '$name' $count times; key names must be unique in a schema, rename one."
            }
            for (key in schema.keys) {
                if (key.name.isBlank()) {
                    problems +=
                        "State schema '${schema.name}' has a key with a blank name; give every key a name."
                }
                if (key.name.startsWith("__")) {
                    problems +=
                        "State key name '${key.name}' in schema '${schema.name}' is reserved (names starting with \"__\" belong to Trellis); rename it."
                }
            }
        }

        private fun checkSlice(id: String, slice: NodeSlice, schema: StateSchema, problems: MutableList<String>) {
            for ((half, keys) in listOf("reads" to slice.reads, "writes" to slice.writes)) {
                for (key in keys.orEmpty()) {
                    if (key.schema !== schema) {
                        problems +=
                            "Node '$id' declares key '${key.name}' of schema '${key.schema.name}' in its $half, but this graph's schema is '${schema.name}'; declare keys of '${schema.name}'."
                    }
                }
            }
        }

        private fun checkNodes(
            nodes: List<Node>,
            schema: StateSchema,
            problems: MutableList<String>,
        ): Map<String, Int> {
            val indexById = HashMap<String, Int>()
            val counts = nodes.groupingBy { it.id }.eachCount()
            for ((id, count) in counts) {
                if (count >
                    1
                ) {
                    problems +=
                        "Node id '$id' is declared $count times; node ids must be unique, rename one of them."
                }
            }
            for (node in nodes) {
                when {
                    node.id.isBlank() -> problems += "A node has a blank id; give every node a non-blank id."
                    node.id.any { it == '/' || it == '[' || it == ']' } ->
                        problems +=
                            "Node id '${node.id}' contains '/', '[' or ']', which name places in composed runs " +
                            "(paths such as research[3]/web); choose an id without them."
                    node.id in Graph.RESERVED_IDS || node.id.startsWith("__") ->
                        problems +=
                            "Node id '${node.id}' is reserved by Trellis (with ${Graph.RESERVED_IDS} and ids starting with \"__\"); choose another id."
                }
                node.slice?.let { checkSlice(node.id, it, schema, problems) }
                node.timeout?.let {
                    if (!it.isPositive()) {
                        problems +=
                            "Node '${node.id}' has timeout $it; a timeout must be positive (or null for none)."
                    }
                }
                indexById.putIfAbsent(node.id, node.index)
            }
            return indexById
        }

        private fun checkEdges(
            edges: List<Edge>,
            known: (String) -> Boolean,
            nodeList: String,
            problems: MutableList<String>,
        ) {
            val seenPlain = HashSet<Pair<String, String>>()
            for (edge in edges) {
                if (edge.from == Graph.END) {
                    problems += "Edge $edge leaves END; END finishes a path and has no outgoing edges, remove the edge."
                } else if (!known(edge.from)) {
                    problems +=
                        "Edge $edge leaves unknown node '${edge.from}'; declare it with " +
                        "${BuildNames.node(edge.from)} or fix the name. Nodes: $nodeList."
                }
                for (target in edge.targets) {
                    if (target != Graph.END && !known(target)) {
                        problems +=
                            "Edge $edge leads to unknown node '$target'; declare it with " +
                            "${BuildNames.node(target)} or fix the name. Nodes: $nodeList."
                    }
                }
                if (edge is Edge.Route) {
                    if (edge.targets.isEmpty()) {
                        problems +=
                            "Route from '${edge.from}' declares no targets; list every node (or END) it may select."
                    }
                    val dupes = edge.targets.groupingBy { it }.eachCount().filterValues { it > 1 }.keys
                    if (dupes.isNotEmpty()) {
                        problems +=
                            "Route from '${edge.from}' lists $dupes more than once; list each target once."
                    }
                }
                if (edge is Edge.Plain && !seenPlain.add(edge.from to edge.to)) {
                    problems += "Edge ${edge.from} -> ${edge.to} is declared twice; remove the duplicate."
                }
            }
        }

        private fun reachable(entries: IntArray, successors: Array<ArrayList<Int>>): BooleanArray {
            val seen = BooleanArray(successors.size)
            val stack = ArrayDeque<Int>()
            entries.forEach {
                if (!seen[it]) {
                    seen[it] = true
                    stack.addLast(it)
                }
            }
            while (stack.isNotEmpty()) {
                val m = stack.removeLast()
                for (s in successors[m]) {
                    if (!seen[s]) {
                        seen[s] = true
                        stack.addLast(s)
                    }
                }
            }
            return seen
        }

        /**
         * The (from, to) pairs whose target is on the stack of a depth-first walk from the entry points (in
         * declaration order) when they are explored: the edges that close a cycle.
         */
        private fun backEdgePairs(entries: IntArray, successors: Array<ArrayList<Int>>): Set<Pair<Int, Int>> {
            val state = IntArray(successors.size) // 0 = new, 1 = on stack, 2 = done
            val back = HashSet<Pair<Int, Int>>()
            for (entry in entries) {
                if (state[entry] != 0) continue
                val stack = ArrayDeque<Pair<Int, Int>>() // node, next successor position
                state[entry] = 1
                stack.addLast(entry to 0)
                while (stack.isNotEmpty()) {
                    val (node, pos) = stack.removeLast()
                    if (pos < successors[node].size) {
                        stack.addLast(node to pos + 1)
                        val s = successors[node][pos]
                        when (state[s]) {
                            0 -> {
                                state[s] = 1
                                stack.addLast(s to 0)
                            }
                            1 -> back += node to s
                        }
                    } else {
                        state[node] = 2
                    }
                }
            }
            return back
        }

        private fun markBackEdges(back: Set<Pair<Int, Int>>, compiled: Array<ArrayList<CompiledEdge>>): List<Edge> {
            val result = ArrayList<Edge>()
            for (from in compiled.indices) {
                for (edge in compiled[from]) {
                    if (edge.targets.any { it >= 0 && (from to it) in back }) {
                        edge.closesCycle = true
                        result += edge.source
                    }
                }
            }
            return java.util.Collections.unmodifiableList(result)
        }
    }
}

/** An edge compiled to node indices; -1 stands for [Graph.END]. */
@InternalTrellisApi
public class CompiledEdge private constructor(
    /** The declared edge. */
    public val source: Edge,
    /** The target indices ([Graph.END] is -1), in declaration order. */
    public val targets: IntArray,
    /** The handles of the targets, for matching a route's selection. */
    public val targetRefs: Array<NodeRef>,
) {
    /** Whether this edge closes a cycle. */
    public var closesCycle: Boolean = false
        internal set

    internal companion object {
        fun of(edge: Edge, targets: IntArray): CompiledEdge =
            CompiledEdge(edge, targets, edge.targets.map { NodeRef.of(it) }.toTypedArray())
    }
}
