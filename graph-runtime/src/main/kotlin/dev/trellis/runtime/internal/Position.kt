package dev.trellis.runtime.internal

import dev.trellis.graph.State
import dev.trellis.graph.Topology

/**
 * The scheduler's position in a run: execution counts, what runs, what is ready, which nodes hold
 * triggers (with their stamps), the active bit set, key versions and last writers. Owned by the run's
 * loop; plain arrays so that it can be checkpointed.
 */
internal class Position(private val size: Int, input: State) {
    val counts = IntArray(size)
    val running = arrayOfNulls<Execution>(size)
    var runningCount = 0
        private set
    var totalExecutions = 0
        private set
    /** Set when a node failed: edges are no longer decided and nothing new starts. */
    var failed = false

    /** Set when the run stops starting nodes: failed, interrupted or drained. */
    var halted = false
    var version = 0L
    val lastWriter = arrayOfNulls<String>(input.copyVersions().size)

    private val active = LongArray((size + 63) ushr 6)
    private val isReady = BooleanArray(size)
    private val readyQueue = IntArray(size)
    private var readyHead = 0
    var readyCount = 0
        private set

    /** The stamp of the first pending trigger of each node, or -1. */
    val stamps = LongArray(size) { -1 }
    private var nextStamp = 0L
    private val triggered = IntArray(size)
    private var triggeredCount = 0

    fun markReady(i: Int) {
        if (isReady[i]) return
        isReady[i] = true
        readyQueue[(readyHead + readyCount) % size] = i
        readyCount++
        setActive(i, true)
    }

    fun pollReady(): Int {
        val i = readyQueue[readyHead]
        readyHead = (readyHead + 1) % size
        readyCount--
        isReady[i] = false
        return i
    }

    /** Counts a new execution of [i] (running from now on) and returns its number. */
    fun begin(i: Int): Int {
        totalExecutions++
        runningCount++
        setActive(i, true)
        return ++counts[i]
    }

    fun finish(i: Int) {
        running[i] = null
        runningCount--
        refresh(i)
    }

    fun trigger(i: Int) {
        if (stamps[i] >= 0) return
        stamps[i] = nextStamp++
        triggered[triggeredCount++] = i
        setActive(i, true)
    }

    /** Makes ready every triggered node that is idle and has nothing active upstream, in stamp order. */
    fun promote(topology: Topology) {
        var kept = 0
        for (r in 0 until triggeredCount) {
            val t = triggered[r]
            if (running[t] == null && !isReady[t] && !blocked(topology.upstream[t])) {
                stamps[t] = -1
                markReady(t)
            } else {
                triggered[kept++] = t
            }
        }
        triggeredCount = kept
    }

    /** When nothing runs and nothing is ready, makes the earliest-triggered node ready; false when none. */
    fun fallback(): Boolean {
        if (triggeredCount == 0) return false
        val t = triggered[0]
        triggered.copyInto(triggered, 0, 1, triggeredCount)
        triggeredCount--
        stamps[t] = -1
        markReady(t)
        return true
    }

    /** The number of nodes holding a trigger. */
    val pendingTriggers: Int get() = triggeredCount

    private fun blocked(upstream: LongArray): Boolean {
        for (w in upstream.indices) if (upstream[w] and active[w] != 0L) return true
        return false
    }

    private fun refresh(i: Int) = setActive(i, running[i] != null || isReady[i] || stamps[i] >= 0)

    private fun setActive(i: Int, on: Boolean) {
        val w = i ushr 6
        val bit = 1L shl (i and 63)
        active[w] = if (on) active[w] or bit else active[w] and bit.inv()
    }

    /** Drops a node polled from the ready queue that will not start after all. */
    fun drop(i: Int) = refresh(i)

    /** The ready nodes in queue order. */
    fun readyNodes(): IntArray = IntArray(readyCount) { readyQueue[(readyHead + it) % size] }

    /** The nodes holding a trigger, in stamp order. */
    fun triggeredNodes(): IntArray = triggered.copyOf(triggeredCount)

    /** The stamp the next trigger gets. */
    val stampCounter: Long get() = nextStamp

    /** Puts back a position read from a checkpoint. */
    fun restore(counts: IntArray, totalExecutions: Int, version: Long, triggers: List<Pair<Int, Long>>, nextStamp: Long, ready: List<Int>) {
        counts.copyInto(this.counts)
        this.totalExecutions = totalExecutions
        this.version = version
        for ((node, stamp) in triggers.sortedBy { it.second }) {
            stamps[node] = stamp
            triggered[triggeredCount++] = node
            setActive(node, true)
        }
        this.nextStamp = nextStamp
        ready.forEach { markReady(it) }
    }
}
