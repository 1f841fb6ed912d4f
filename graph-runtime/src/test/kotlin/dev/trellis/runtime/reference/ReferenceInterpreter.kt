package dev.trellis.runtime.reference

import dev.trellis.runtime.Status
import java.util.PriorityQueue

/**
 * A small sequential interpreter of `docs/semantics.md` §4–7, written from the contract (not from the
 * engine) as a discrete-event simulation in virtual time.
 *
 * Executions finish at `start + duration`; simultaneous finishes are handled in start order. After each
 * finish: merge, decide edges (leaving stamped triggers), promote. Ready nodes start in the order they
 * became ready, up to the concurrency limit; when nothing runs or is ready, the earliest trigger falls back.
 */
object ReferenceInterpreter {
    class Outcome(
        val status: Status,
        /** `node <i>` or `limit`, for a failed run. */
        val error: String?,
        val statuses: List<Status>,
        val counts: List<Int>,
        val sum: Int,
        /** The append-reducer key, sorted (compared as a multiset). */
        val log: List<Int>,
        /** Triggers left when the run ended (dropped when it failed). */
        val triggersLeft: Int,
        /** Whether a fallback had to choose between several nodes holding triggers. */
        val choseInFallback: Boolean,
    ) {
        override fun toString(): String =
            "Outcome($status, error=$error, statuses=$statuses, counts=$counts, sum=$sum, choseInFallback=$choseInFallback)"
    }

    private class Running(val node: Int, val execution: Int, val finish: Long, val order: Long)

    fun run(spec: GraphSpec): Outcome {
        val n = spec.size
        val upstream = Array(n) { upstreamOf(spec, it) }
        val counts = IntArray(n)
        val statuses = Array(n) { Status.PENDING }
        val stamps = LongArray(n) { -1 }
        var nextStamp = 0L
        val ready = ArrayDeque<Int>()
        val isReady = BooleanArray(n)
        val running = BooleanArray(n)
        var runningCount = 0
        val finishing = PriorityQueue<Running>(compareBy<Running>({ it.finish }, { it.order }))
        var now = 0L
        var order = 0L
        var total = 0
        var error: String? = null
        val log = ArrayList<Int>()
        var chose = false

        fun makeReady(t: Int) {
            if (!isReady[t]) {
                isReady[t] = true
                ready.addLast(t)
            }
        }
        fun active(m: Int) = running[m] || isReady[m] || stamps[m] >= 0
        fun promote() {
            do {
                var changed = false
                for (t in (0 until n).filter { stamps[it] >= 0 }.sortedBy { stamps[it] }) {
                    if (running[t] || isReady[t]) continue
                    if ((0 until n).any { upstream[t][it] && active(it) }) continue
                    stamps[t] = -1
                    makeReady(t)
                    changed = true
                }
            } while (changed)
        }

        spec.entries.forEach { makeReady(it) }
        while (true) {
            while (error == null && ready.isNotEmpty() && runningCount < spec.maxConcurrency) {
                val t = ready.removeFirst()
                isReady[t] = false
                if (total >= spec.maxNodeExecutions) {
                    error = "limit"
                    break
                }
                total++
                counts[t]++
                running[t] = true
                runningCount++
                statuses[t] = Status.EXECUTING
                finishing += Running(t, counts[t], now + spec.duration(t, counts[t]), order++)
            }
            if (runningCount == 0) {
                val holding = (0 until n).filter { stamps[it] >= 0 }
                if (error == null && holding.isNotEmpty()) {
                    if (holding.size > 1) chose = true
                    val t = holding.minBy { stamps[it] }
                    stamps[t] = -1
                    makeReady(t)
                    continue
                }
                break
            }
            val done = finishing.poll()
            now = done.finish
            running[done.node] = false
            runningCount--
            if (done.execution == spec.failAt[done.node]) {
                statuses[done.node] = Status.FAILED
                if (error == null) error = "node ${done.node}"
            } else {
                statuses[done.node] = Status.COMPLETED
                log += done.node
                if (error == null) {
                    for (edge in spec.edges) {
                        if (edge.from != done.node) continue
                        for (target in edge.decide(counts[done.node])) {
                            if (target >= 0 && stamps[target] < 0) stamps[target] = nextStamp++
                        }
                    }
                }
            }
            if (error == null) promote()
        }
        val left = (0 until n).count { stamps[it] >= 0 }
        check(error != null || left == 0) { "the reference ended a completed run with $left triggers pending" }
        return Outcome(
            status = if (error == null) Status.COMPLETED else Status.FAILED,
            error = error,
            statuses = statuses.toList(),
            counts = counts.toList(),
            sum = log.sumOf { it + 1 },
            log = log.sorted(),
            triggersLeft = left,
            choseInFallback = chose,
        )
    }

    /**
     * The nodes that reach [n] along forward edges without passing through [n]; forward edges are all edges but
     * the back edges of a depth-first walk from the entry points, successors in declaration order.
     */
    fun upstreamOf(spec: GraphSpec, n: Int): BooleanArray {
        val back = backEdges(spec)
        val result = BooleanArray(spec.size)
        val stack = ArrayDeque<Int>()
        fun predecessors(m: Int) = (0 until spec.size).filter { p -> m in successors(spec, p) && (p to m) !in back }
        predecessors(n).filter { it != n }.forEach { stack.addLast(it) }
        while (stack.isNotEmpty()) {
            val m = stack.removeLast()
            if (m == n || result[m]) continue
            result[m] = true
            predecessors(m).filter { it != n }.forEach { stack.addLast(it) }
        }
        return result
    }

    private fun successors(spec: GraphSpec, m: Int): List<Int> =
        spec.edges.filter { it.from == m }.flatMap { it.targets }.filter { it >= 0 }.distinct()

    /** Edges to a node that is still being visited by a recursive depth-first walk: they close a cycle. */
    fun backEdges(spec: GraphSpec): Set<Pair<Int, Int>> {
        val state = IntArray(spec.size)
        val back = HashSet<Pair<Int, Int>>()
        fun visit(m: Int) {
            state[m] = 1
            for (s in successors(spec, m)) {
                when (state[s]) {
                    0 -> visit(s)
                    1 -> back += m to s
                }
            }
            state[m] = 2
        }
        spec.entries.distinct().forEach { if (state[it] == 0) visit(it) }
        return back
    }
}
