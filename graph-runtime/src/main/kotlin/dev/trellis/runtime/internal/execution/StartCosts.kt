package dev.trellis.runtime.internal.execution

import dev.trellis.graph.Topology
import dev.trellis.runtime.internal.checkpoint.PayloadTexts
import dev.trellis.runtime.internal.persistence.Checkpointer
import dev.trellis.runtime.internal.scheduling.Position
import java.util.WeakHashMap
import java.util.concurrent.atomic.AtomicLongArray
import java.util.concurrent.atomic.AtomicReference

/**
 * A scheduling hint kept by the runtime across the runs of a graph: for each node of a [Topology], how long (ns)
 * starting its last execution kept the starting thread busy, i.e. until it finished or first suspended;
 * [Long.MAX_VALUE] until known. It never changes what a run computes, only which thread starts a node (see [work]).
 * Kept while the graph is reachable, with the rest of the graph's [GraphRuntime]; each run looks it up once.
 */
internal object StartCosts {
    private val byTopology = WeakHashMap<Topology, GraphRuntime>()

    /** The last graph's: the common case of a graph run again and again takes no lock. */
    @Volatile
    private var last: Entry? = null

    private class Entry(val topology: java.lang.ref.WeakReference<Topology>, val runtime: GraphRuntime)

    /** The start costs of the nodes of [topology], by node index. */
    fun of(topology: Topology): AtomicLongArray = runtimeOf(topology).costs

    /** What the runtime keeps across the runs of [topology]. */
    fun runtimeOf(topology: Topology): GraphRuntime {
        last?.let { if (it.topology.get() === topology) return it.runtime }
        val runtime = synchronized(byTopology) {
            byTopology.getOrPut(topology) {
                val costs = AtomicLongArray(topology.size)
                for (i in 0 until topology.size) costs.set(i, Long.MAX_VALUE)
                GraphRuntime(topology, costs)
            }
        }
        last = Entry(java.lang.ref.WeakReference(topology), runtime)
        return runtime
    }
}

/**
 * What the runtime keeps across the runs of one graph: its nodes' start [costs] ([StartCosts]), and the [Position] of
 * a run that ended, which the next run reuses instead of allocating its per-node and per-channel arrays again
 * ([Position.reuse]). One spare at most; concurrent runs of the graph take it in turn or allocate their own. The
 * same holds for the checkpoint payload buffer of a run that ended ([Checkpointer]), already grown to the size of the
 * graph's full checkpoints; the graph's [payloadTexts] are made once.
 */
internal class GraphRuntime(private val topology: Topology, val costs: AtomicLongArray) {
    /** Whether a node of the graph has interceptors or a cache of its own ([interceptorTable]). */
    val nodesIntercepted: Boolean = topology.nodes.any { it.interceptors.isNotEmpty() || it.cache != null }

    /** The graph's checkpoint payload texts, made by the first run that saves a checkpoint. */
    val payloadTexts: PayloadTexts by lazy(LazyThreadSafetyMode.PUBLICATION) { PayloadTexts(topology) }

    private val spare = AtomicReference<Position?>()

    /** A position whose run ended, reset for a new run, or null when there is none to take. */
    fun takePosition(): Position? = spare.getAndSet(null)?.also { it.reuse() }

    /** Gives the position of a run that ended, and that nothing touches any more, to the next run. */
    fun givePosition(position: Position) {
        spare.lazySet(position)
    }

    private val spareBuffer = AtomicReference<StringBuilder?>()

    /** The payload buffer of a run that ended, or null when there is none to take. */
    fun takeBuffer(): StringBuilder? = spareBuffer.getAndSet(null)

    /** Gives the payload buffer of a run that will save nothing more to the next run. */
    fun giveBuffer(buffer: StringBuilder) {
        spareBuffer.lazySet(buffer)
    }
}
