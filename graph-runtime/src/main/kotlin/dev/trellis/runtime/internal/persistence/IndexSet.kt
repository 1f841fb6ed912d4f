package dev.trellis.runtime.internal.persistence

/**
 * A set of indexes in `0 until capacity`, in insertion order, that adds, iterates and clears in time proportional to
 * its size (not to the capacity): what changed since the last checkpoint, found without scanning every key or node.
 */
internal class IndexSet(capacity: Int) {
    private val member = BooleanArray(capacity)
    private val order = IntArray(capacity)

    /** The number of indexes in the set; they are [at] `0 until size`, in the order they were added. */
    var size: Int = 0
        private set

    fun add(index: Int) {
        if (member[index]) return
        member[index] = true
        order[size++] = index
    }

    fun at(i: Int): Int = order[i]

    fun clear() {
        for (i in 0 until size) member[order[i]] = false
        size = 0
    }
}
