package dev.trellis.test.eval

/**
 * What is evaluated: runs one case and returns its output. Runs concurrently with other cases (up to the
 * evaluation's concurrency); a target that throws fails its case, not the evaluation.
 *
 * ```kotlin
 * val target = EvalTarget { case ->
 *     val events = graph.events(stateOf(Research.question to case.input("question")!!)).toList()
 *     EvalOutput(events.result().state[Research.published], events, graph)
 * }
 * ```
 */
public fun interface EvalTarget {
    /** The output of [case]. */
    public suspend fun run(case: EvalCase): EvalOutput

    /** Makes targets. */
    public companion object {
        /** A target from a blocking function (Java), run on the IO pool. */
        @JvmStatic
        public fun blocking(target: BlockingEvalTarget): EvalTarget = EvalTarget { case ->
            kotlinx.coroutines.runInterruptible(kotlinx.coroutines.Dispatchers.IO) { target.run(case) }
        }
    }
}

/** A blocking [EvalTarget] (Java). */
public fun interface BlockingEvalTarget {
    /** The output of [case]. */
    @Throws(Exception::class)
    public fun run(case: EvalCase): EvalOutput
}
