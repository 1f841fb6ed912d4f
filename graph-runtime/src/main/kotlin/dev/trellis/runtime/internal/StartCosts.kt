package dev.trellis.runtime.internal

import dev.trellis.graph.Topology
import java.util.WeakHashMap
import java.util.concurrent.atomic.AtomicLongArray

/**
 * A scheduling hint kept by the runtime across the runs of a graph: for each node of a [Topology], how long (ns)
 * starting its last execution kept the starting thread busy, i.e. until it finished or first suspended;
 * [Long.MAX_VALUE] until known. It never changes what a run computes, only which thread starts a node (see [work]).
 * Kept while the graph is reachable; each run looks its graph's costs up once.
 */
internal object StartCosts {
    private val byTopology = WeakHashMap<Topology, AtomicLongArray>()

    /** The last graph's costs: the common case of a graph run again and again takes no lock. */
    @Volatile
    private var last: Entry? = null

    private class Entry(val topology: java.lang.ref.WeakReference<Topology>, val costs: AtomicLongArray)

    /** The start costs of the nodes of [topology], by node index. */
    fun of(topology: Topology): AtomicLongArray {
        last?.let { if (it.topology.get() === topology) return it.costs }
        val costs = synchronized(byTopology) {
            byTopology.getOrPut(topology) {
                AtomicLongArray(topology.size).also { for (i in 0 until topology.size) it.set(i, Long.MAX_VALUE) }
            }
        }
        last = Entry(java.lang.ref.WeakReference(topology), costs)
        return costs
    }
}
