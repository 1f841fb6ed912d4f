package dev.trellis.samples

import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.runtime.RunResult

/**
 * An interceptor that meters what every node costs by charging the run's `tokens` meter (`docs/semantics.md` §13.4):
 * one "token" per character of text a node's attempt wrote (a stand-in for a model's token count), plus one for the
 * call itself — also when the attempt fails (a failed call is paid for too). The run's budget limits the meter; the
 * totals are in the run's result.
 */
internal class CostMeter : NodeInterceptor {
    override suspend fun intercept(chain: NodeChain): NodeWrites {
        val writes = try {
            chain.proceed()
        } catch (e: Throwable) {
            chain.charge(TOKENS, 1.0)
            throw e
        }
        var cost = 1L // the call itself
        for (i in 0 until writes.size) cost += textLength(writes.valueAt(i))
        chain.charge(TOKENS, cost.toDouble())
        return writes
    }

    private fun textLength(value: Any?): Long = when (value) {
        is CharSequence -> value.length.toLong()
        is Collection<*> -> value.sumOf { textLength(it) }
        else -> 0
    }

    companion object {
        /** The meter this interceptor charges. */
        const val TOKENS: String = "tokens"

        /** One line for the run's summary: the run's meter totals and the budget of [TOKENS]. */
        fun summary(result: RunResult, limit: Double): String =
            "cost meter (interceptor): ${result.meters[TOKENS]?.toLong() ?: 0} tokens of a budget of ${limit.toLong()}"
    }
}
