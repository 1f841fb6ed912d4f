package dev.trellis.graph

/**
 * The input channels of a compiled graph (`docs/semantics.md` §4–5): one channel per distinct pair of a source
 * node `m` and a target node `n` joined by at least one edge (a self-loop `n → n` included), numbered
 * `0 until count`; the channels of node `n` are `start[n] until start[n + 1]`, ordered by source index.
 *
 * For each channel `m → n`, [feeders] holds the bit set (`words[i ushr 6]`, bit `i and 63`) of the nodes that
 * can reach `m` without passing through `n`, `m` included (empty when `m == n`): while one of them is active, an
 * empty channel may still receive a token before `n` runs again, so a join waits for it.
 */
@InternalTrellisApi
public class InputChannels private constructor(
    /** For node `n`, its first channel; the last entry is [count]. */
    public val start: IntArray,
    /** The source node of each channel. */
    public val source: IntArray,
    /** The bit set of the feeders of each channel. */
    public val feeders: Array<LongArray>,
) {
    /** The number of channels. */
    public val count: Int get() = source.size

    /**
     * The channel from [from] to [to], or -1 when no edge joins them: a binary search of [to]'s channels, which are
     * ordered by source (a join of 64 branches looks each up in 6 steps, not 32 on average).
     */
    public fun of(from: Int, to: Int): Int {
        var low = start[to]
        var high = start[to + 1] - 1
        while (low <= high) {
            val mid = (low + high) ushr 1
            val m = source[mid]
            when {
                m < from -> low = mid + 1
                m > from -> high = mid - 1
                else -> return mid
            }
        }
        return -1
    }

    /** Whether node [m] feeds channel [channel]. */
    public fun feeds(m: Int, channel: Int): Boolean = (feeders[channel][m ushr 6] and (1L shl (m and 63))) != 0L

    internal companion object {
        /** Channels of a graph whose node `m` has the distinct successors `successors[m]`. */
        fun of(successors: Array<out List<Int>>): InputChannels {
            val n = successors.size
            val predecessors = Array(n) { ArrayList<Int>() }
            for (m in 0 until n) for (s in successors[m]) predecessors[s] += m
            val start = IntArray(n + 1)
            for (t in 0 until n) start[t + 1] = start[t] + predecessors[t].size
            val source = IntArray(start[n])
            val feeders = arrayOfNulls<LongArray>(start[n])
            for (t in 0 until n) {
                val sorted = predecessors[t].sorted()
                for ((k, m) in sorted.withIndex()) {
                    source[start[t] + k] = m
                    feeders[start[t] + k] =
                        if (m == t) LongArray((n + 63) ushr 6) else reaching(m, avoiding = t, predecessors)
                }
            }
            @Suppress("UNCHECKED_CAST")
            return InputChannels(start, source, feeders as Array<LongArray>)
        }

        /** The nodes that reach [m] without passing through [avoiding], [m] included: a backward walk from [m]. */
        private fun reaching(m: Int, avoiding: Int, predecessors: Array<ArrayList<Int>>): LongArray {
            val bits = LongArray((predecessors.size + 63) ushr 6)
            val stack = ArrayDeque<Int>()
            stack.addLast(m)
            while (stack.isNotEmpty()) {
                val x = stack.removeLast()
                if (x == avoiding || bits[x ushr 6] and (1L shl (x and 63)) != 0L) continue
                bits[x ushr 6] = bits[x ushr 6] or (1L shl (x and 63))
                for (p in predecessors[x]) stack.addLast(p)
            }
            return bits
        }
    }
}
