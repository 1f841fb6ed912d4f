package dev.trellis.graph

/**
 * The build-time check of node slices (`docs/semantics.md` §12): which pairs of nodes can run in parallel, and
 * which of them both declare writes to a key without a reducer. The relation is computed only when at least two
 * nodes share such a key, so graphs without write slices pay nothing.
 */
internal object ParallelWrites {
    /** The pairs of nodes of [topology] that can run in parallel and may both write a key without a reducer. */
    fun find(topology: Topology, maxConcurrency: Int): List<ParallelWrite> {
        val nodes = topology.nodes
        val writers = HashMap<StateKey<*>, MutableList<Int>>()
        for (node in nodes) {
            for (key in node.slice?.writes.orEmpty()) {
                if (key.reducer == null) writers.getOrPut(key) { ArrayList() } += node.index
            }
        }
        if (writers.values.none { it.size > 1 }) return emptyList()
        val parallel = Parallelism(topology, maxConcurrency)
        val found = ArrayList<ParallelWrite>()
        for (key in topology.keys) {
            val list = writers[key] ?: continue
            for (i in list.indices) {
                for (j in i + 1 until list.size) {
                    val u = list[i]
                    val v = list[j]
                    if (parallel.canRunInParallel(u, v)) {
                        found += ParallelWrite(key, nodes[u].id, nodes[v].id, parallel.definite(u, v))
                    }
                }
            }
        }
        return found
    }
}

/**
 * Which nodes of [topology] can run at the same time (`docs/semantics.md` §12): the independence relation `I`, the
 * once-nodes and reachability. Quadratic in the number of nodes (bit sets); built only when a check needs it.
 */
@InternalTrellisApi
public class Parallelism(private val topology: Topology, private val maxConcurrency: Int) {
    private val n = topology.size
    private val words = (n + 63) ushr 6
    private val successors: Array<IntArray> = Array(n) { m ->
        topology.outgoing[m].flatMap { e -> e.targets.filter { it >= 0 } }.distinct().toIntArray()
    }
    private val hasInput = BooleanArray(n).also { has -> for (m in 0 until n) for (s in successors[m]) has[s] = true }

    /** reaches[v] holds u when a path of at least one edge leads from v to u. */
    private val reaches: Array<LongArray> = Array(n) { v -> walk(intArrayOf(v)) }

    /** Nodes that run at most once per run: reached by no cycle and no entry point with incoming edges. */
    private val once: BooleanArray = run {
        val seeds = (0 until n).filter { has(reaches[it], it) || (it in topology.entries && hasInput[it]) }
        val tainted = walk(seeds.toIntArray())
        seeds.forEach { set(tainted, it) }
        BooleanArray(n) { !has(tainted, it) }
    }

    private val independent: Array<LongArray> = independence()

    /** Whether nodes [u] and [v] (indices, distinct) can be running at the same time in some run. */
    public fun canRunInParallel(u: Int, v: Int): Boolean =
        u != v && maxConcurrency != 1 && has(independent[u], v) &&
            !(once[u] && has(reaches[v], u)) && !(once[v] && has(reaches[u], v))

    /** Whether [u] and [v] always start together: entry points without inputs, or a plain fan-out as their only source. */
    internal fun definite(u: Int, v: Int): Boolean {
        if (!canRunInParallel(u, v)) return false
        val entries = topology.entries
        if (u in entries && v in entries && !hasInput[u] && !hasInput[v]) return true
        val channels = topology.channels
        if (channels.start[u + 1] - channels.start[u] != 1 ||
            channels.start[v + 1] - channels.start[v] != 1
        ) {
            return false
        }
        val source = channels.source[channels.start[u]]
        if (channels.source[channels.start[v]] != source) return false
        val plain = topology.outgoing[source].map { it.source }.filterIsInstance<Edge.Plain>()
        return plain.any { it.to == topology.nodes[u].id } && plain.any { it.to == topology.nodes[v].id }
    }

    /** The smallest symmetric relation closed under the rules of §12, by a work list over pairs. */
    private fun independence(): Array<LongArray> {
        val rel = Array(n) { LongArray(words) }
        val work = ArrayDeque<Long>()

        fun add(x: Int, y: Int) {
            if (has(rel[x], y)) return
            set(rel[x], y)
            set(rel[y], x)
            work.addLast((x.toLong() shl 32) or y.toLong())
            if (x != y) work.addLast((y.toLong() shl 32) or x.toLong())
        }
        val entries = topology.entries.distinct()
        for (a in entries) for (b in entries) if (a != b) add(a, b)
        for (f in 0 until n) {
            val edges = topology.outgoing[f]
            for (i in edges.indices) {
                for (j in edges.indices) {
                    if (i == j) continue
                    for (x in edges[i].targets) for (y in edges[j].targets) if (x >= 0 && y >= 0 && x != y) add(x, y)
                }
            }
        }
        while (work.isNotEmpty()) {
            val pair = work.removeFirst()
            val x = (pair ushr 32).toInt()
            val y = pair.toInt()
            for (w in successors[x]) add(w, y)
        }
        return rel
    }

    /** The nodes reached from [from] by at least one edge. */
    private fun walk(from: IntArray): LongArray {
        val seen = LongArray(words)
        val stack = ArrayDeque<Int>()
        for (f in from) for (s in successors[f]) stack.addLast(s)
        while (stack.isNotEmpty()) {
            val x = stack.removeLast()
            if (has(seen, x)) continue
            set(seen, x)
            for (s in successors[x]) stack.addLast(s)
        }
        return seen
    }

    private fun has(bits: LongArray, i: Int): Boolean = bits[i ushr 6] and (1L shl (i and 63)) != 0L

    private fun set(bits: LongArray, i: Int) {
        bits[i ushr 6] = bits[i ushr 6] or (1L shl (i and 63))
    }
}
