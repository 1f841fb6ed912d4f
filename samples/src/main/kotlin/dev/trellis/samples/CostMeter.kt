package dev.trellis.samples

import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

/**
 * An interceptor that meters what every node costs: one "token" per character of text a node's attempt wrote
 * (a stand-in for a model's token count), per node, failed attempts included (a failed call is paid for too).
 */
internal class CostMeter : NodeInterceptor {
    private val tokens = ConcurrentHashMap<String, AtomicLong>()

    override suspend fun intercept(chain: NodeChain): NodeWrites {
        val writes = chain.proceed()
        var cost = 1L // the call itself
        for (i in 0 until writes.size) cost += textLength(writes.valueAt(i))
        tokens.computeIfAbsent(chain.nodeId) { AtomicLong() }.addAndGet(cost)
        return writes
    }

    private fun textLength(value: Any?): Long = when (value) {
        is CharSequence -> value.length.toLong()
        is Collection<*> -> value.sumOf { textLength(it) }
        else -> 0
    }

    /** The tokens charged so far, in total. */
    val total: Long get() = tokens.values.sumOf { it.get() }

    /** One line for the run's summary: the total and the three most expensive nodes. */
    fun summary(): String =
        "cost meter (interceptor): $total tokens; most: " +
            tokens.entries.sortedByDescending { it.value.get() }.take(3).joinToString { "${it.key}=${it.value.get()}" }
}
