package dev.trellis.test.eval

/**
 * Scores one case's output against its expectations. Scorers may block (an LLM judge calls a model): they run on
 * the IO pool. Ready-made ones are in [Scorers].
 */
public interface Scorer {
    /** The scorer's name, a column of the report. */
    public val name: String

    /** The score of [output] for [case]. */
    @Throws(Exception::class)
    public fun score(case: EvalCase, output: EvalOutput): Score

    /** Makes scorers. */
    public companion object {
        /** A scorer named [name] computed by [score]. */
        @JvmStatic
        public fun of(name: String, score: ScoreFunction): Scorer = object : Scorer {
            override val name: String = name

            override fun score(case: EvalCase, output: EvalOutput): Score = score.score(case, output)

            override fun toString(): String = "Scorer($name)"
        }
    }
}

/** The body of a scorer made with [Scorer.of]. */
public fun interface ScoreFunction {
    /** The score of [output] for [case]. */
    @Throws(Exception::class)
    public fun score(case: EvalCase, output: EvalOutput): Score
}
