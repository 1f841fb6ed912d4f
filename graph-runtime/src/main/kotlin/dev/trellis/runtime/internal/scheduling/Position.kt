package dev.trellis.runtime.internal.scheduling

import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.graph.InputChannels
import dev.trellis.runtime.internal.events.EventHead
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.execution.GraphRuntime
import dev.trellis.runtime.internal.persistence.restore
import dev.trellis.runtime.internal.policies.Meters
import dev.trellis.runtime.internal.policies.meters

/**
 * The scheduler's position in a run, and its readiness rule (`docs/semantics.md` §4–5): execution counts, what runs,
 * what is ready, the tokens waiting on each input channel, the active bit set, key versions and last writers. A node
 * holding a token becomes ready when it is idle and each of its empty channels is settled — no active node can still
 * send it a token ([promote]); a cycle whose nodes wait for each other starts at its first declared node
 * ([fallback]). Owned by the holder of the drive right; plain arrays so that it can be checkpointed.
 *
 * The driver's other per-run fields live here too ([cancelSeen], [storeFault], its clock readings): a position is
 * handed to the next run of its graph ([reuse]) where an [Engine] is made per run, so a field here costs no bytes per
 * run.
 */
internal class Position(private val size: Int, keyCount: Int, private val channels: InputChannels) {
    /** The executions of each node so far; a new array per run ([reuse]): the run's result keeps it. */
    var counts = IntArray(size)
        private set
    val running = arrayOfNulls<Execution>(size)
    var runningCount = 0
        private set
    var totalExecutions = 0
        private set

    /** Set when a node failed: edges are no longer decided and nothing new starts. */
    var failed = false

    /** Set when the run stops starting nodes: failed, interrupted or drained. */
    var halted = false

    /** Set once an execution ended cancelled with the run: it saves and starts nothing more (semantics §6). */
    var cancelSeen = false

    /** Set when a checkpoint could not be saved because the store stayed unreachable: the run stops resumable. */
    var storeFault: CheckpointStoreUnavailableException? = null

    /**
     * When the node the driver ran inline last ended ([Engine.nanoTime]), while its current [startReady] has done
     * nothing since that may wait (a checkpoint, a slow event reader); else [NO_READING]. The next node it runs inline
     * in that pass starts at this reading instead of a new one: one clock reading per step of a chain or loop, not two
     * (the driver's own work between them — merge, edges — is counted in the next node's duration; `Drive.kt`). While
     * the driver runs a node inline, the node's start reading.
     */
    var lastEnd = NO_READING

    /**
     * The timestamp of the last `NodeCompleted` the driver posted, and when ([Engine.nanoTime]) it was read
     * (`events/NodeEvents.kt`).
     */
    var lastCompletedAt: java.time.Instant? = null
    var lastCompletedNanos = 0L

    /** The head the driver's node events are made from (`events/EventHead.kt`), made by its first one. */
    var eventHead: EventHead? = null
    var version = 0L

    /**
     * The run's meter totals and time spent (`policies/Meters.kt`); null while nothing was charged and no budget
     * needs it.
     */
    var meters: Meters? = null
    val lastWriter = arrayOfNulls<String>(keyCount)

    private val active = LongArray((size + 63) ushr 6)
    private val isReady = BooleanArray(size)
    private val readyQueue = IntArray(size)
    private var readyHead = 0
    var readyCount = 0
        private set

    /** The tokens waiting on each input channel. */
    val tokens = IntArray(channels.count)

    /** For each node, how many of its channels hold a token (the node holds a trigger when this is positive). */
    private val held = IntArray(size)

    /** For each node, the input channel [settled] found unsettled last (a hint only: any value gives the same answer). */
    private val unsettledAt = IntArray(size)

    /** The nodes holding a trigger, in the order they came to hold one. */
    private val triggered = IntArray(size)
    private var triggeredCount = 0

    fun markReady(i: Int) {
        if (isReady[i]) return
        isReady[i] = true
        readyQueue[wrap(readyHead + readyCount)] = i
        readyCount++
        setActive(i, true)
    }

    fun pollReady(): Int {
        val i = readyQueue[readyHead]
        readyHead = wrap(readyHead + 1)
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

    /** Puts a token on [channel], an input channel of node [i]. */
    fun trigger(i: Int, channel: Int) {
        if (tokens[channel]++ == 0 && held[i]++ == 0) {
            triggered[triggeredCount++] = i
            setActive(i, true)
        }
    }

    /**
     * Makes ready every node holding a trigger that is idle and whose empty channels are all settled, taking one
     * token from each of its non-empty channels; nodes are examined in the order they came to hold a trigger. One
     * pass suffices: a node made ready was active already, so no other node's channels become settled by it.
     */
    fun promote() {
        var kept = 0
        for (r in 0 until triggeredCount) {
            val t = triggered[r]
            if (running[t] == null && !isReady[t] && settled(t)) {
                take(t)
                markReady(t)
                if (held[t] == 0) continue
            }
            triggered[kept++] = t
        }
        triggeredCount = kept
    }

    /**
     * When nothing runs and nothing is ready but nodes hold triggers (they wait for each other around a cycle), makes
     * the one declared first ready; false when no node holds a trigger.
     */
    fun fallback(): Boolean {
        if (triggeredCount == 0) return false
        var first = 0
        for (r in 1 until triggeredCount) if (triggered[r] < triggered[first]) first = r
        val t = triggered[first]
        take(t)
        markReady(t)
        if (held[t] == 0) {
            triggered.copyInto(triggered, first, first + 1, triggeredCount)
            triggeredCount--
        }
        return true
    }

    /** The number of nodes holding a trigger. */
    val pendingTriggers: Int get() = triggeredCount

    /** Whether every empty input channel of [t] is settled: none of its feeders is active. */
    private fun settled(t: Int): Boolean {
        val start = channels.start
        val first = start[t]
        val end = start[t + 1]
        // The channels are checked from the one that was unsettled last time, round to it: the answer is the same
        // in any order (every channel must be settled), and a join whose branches finish one by one finds its first
        // unsettled channel at once instead of after all the settled ones (a join of n branches: n checks, not n²/2).
        val hint = unsettledAt[t]
        val from = if (hint in first until end) hint else first
        for (c in from until end) if (waits(c)) return unsettled(t, c)
        for (c in first until from) if (waits(c)) return unsettled(t, c)
        return true
    }

    /** Whether channel [c] is empty while one of its feeders is active: it may still get a token. */
    private fun waits(c: Int): Boolean = tokens[c] == 0 && intersects(channels.feeders[c])

    /** Notes [c] as the channel where [settled] of [t] starts next time; false. */
    private fun unsettled(t: Int, c: Int): Boolean {
        unsettledAt[t] = c
        return false
    }

    /** Takes one token from every non-empty input channel of [t]. */
    private fun take(t: Int) {
        val start = channels.start
        for (c in start[t] until start[t + 1]) {
            if (tokens[c] > 0 && --tokens[c] == 0) held[t]--
        }
    }

    private fun intersects(bits: LongArray): Boolean {
        for (w in bits.indices) if (bits[w] and active[w] != 0L) return true
        return false
    }

    private fun refresh(i: Int) = setActive(i, running[i] != null || isReady[i] || held[i] > 0)

    private fun setActive(i: Int, on: Boolean) {
        val w = i ushr 6
        val bit = 1L shl (i and 63)
        active[w] = if (on) active[w] or bit else active[w] and bit.inv()
    }

    /**
     * Makes this position, whose run ended, the position of a new run of the same graph, as if it were new: a run's
     * position is some arrays per node and channel, most of which its result does not keep ([GraphRuntime]).
     */
    fun reuse() {
        counts = IntArray(size)
        running.fill(null)
        runningCount = 0
        totalExecutions = 0
        failed = false
        halted = false
        cancelSeen = false
        storeFault = null
        lastEnd = NO_READING
        lastCompletedAt = null
        version = 0L
        meters = null
        lastWriter.fill(null)
        active.fill(0L)
        isReady.fill(false)
        readyHead = 0
        readyCount = 0
        tokens.fill(0)
        held.fill(0)
        triggeredCount = 0
    }

    /** Drops a node polled from the ready queue that will not start after all. */
    fun drop(i: Int) = refresh(i)

    /** The ready nodes in queue order. */
    fun readyNodes(): IntArray = IntArray(readyCount) { readyAt(it) }

    /** The [i]th ready node, in the order they became ready ([readyNodes] without the copy). */
    fun readyAt(i: Int): Int = readyQueue[wrap(readyHead + i)]

    /** A place in the ready queue's ring, [at] < 2 × size: one compare instead of a division per step. */
    private fun wrap(at: Int): Int = if (at >= size) at - size else at

    /** How many nodes hold a trigger. */
    val triggeredSize: Int get() = triggeredCount

    /** The nodes holding a trigger, in the order they came to hold one. */
    fun triggeredNodes(): IntArray = triggered.copyOf(triggeredCount)

    /**
     * Puts back a position read from a checkpoint; [tokens] lists (node, channel, count) with the nodes in the order
     * they came to hold a trigger.
     */
    fun restore(
        counts: IntArray,
        totalExecutions: Int,
        version: Long,
        tokens: List<Triple<Int, Int, Int>>,
        ready: List<Int>,
    ) {
        counts.copyInto(this.counts)
        this.totalExecutions = totalExecutions
        this.version = version
        for ((node, channel, count) in tokens) {
            if (count <= 0) continue
            repeat(count) { trigger(node, channel) }
        }
        ready.forEach { markReady(it) }
    }
}
