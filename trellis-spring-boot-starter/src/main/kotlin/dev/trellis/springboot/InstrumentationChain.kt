package dev.trellis.springboot

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import kotlinx.coroutines.flow.Flow
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext

/**
 * Several instrumentations as one (a runner takes one): the first is outermost — it sees the events last and its
 * interceptors run outside the others'. The caller contexts are added up, the later ones winning on a clash.
 */
internal class InstrumentationChain(private val parts: List<RunInstrumentation>) : RunInstrumentation {
    override fun callerContext(): CoroutineContext =
        parts.fold(EmptyCoroutineContext as CoroutineContext) { context, part -> context + part.callerContext() }

    override fun instrument(
        graph: Graph,
        options: RunOptions,
        resumedRunId: String?,
        run: (RunOptions) -> Flow<RunEvent>,
    ): Flow<RunEvent> {
        val chained = parts.foldRight(run) { part, inner ->
            { opts: RunOptions -> part.instrument(graph, opts, resumedRunId, inner) }
        }
        return chained(options)
    }

    companion object {
        /** One instrumentation for [parts]: null for none, the part itself for one. */
        fun of(parts: List<RunInstrumentation>): RunInstrumentation? = when (parts.size) {
            0 -> null
            1 -> parts.single()
            else -> InstrumentationChain(parts)
        }
    }
}
