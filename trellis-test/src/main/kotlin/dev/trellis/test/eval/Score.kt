package dev.trellis.test.eval

/**
 * One scorer's verdict on one case: a [value] from 0 to 1, whether it [passed], and why ([reason]). A scorer
 * whose expectation the case does not have returns [notApplicable]; it does not count.
 */
public class Score private constructor(
    /** From 0 (wrong) to 1 (right). */
    public val value: Double,
    /** Whether the case passes this scorer. */
    public val passed: Boolean,
    /** Why: what was expected and what was found. */
    public val reason: String,
    /** Whether the scorer applied to the case at all. */
    public val applicable: Boolean,
) {
    override fun toString(): String =
        if (!applicable) "n/a" else "${if (passed) "pass" else "FAIL"} ${"%.2f".format(value)} ($reason)"

    /** Makes scores. */
    public companion object {
        /** A passing score of 1. */
        @JvmStatic
        public fun pass(reason: String): Score = Score(1.0, true, reason, true)

        /** A failing score of 0. */
        @JvmStatic
        public fun fail(reason: String): Score = Score(0.0, false, reason, true)

        /** A score of [value] (0 to 1) that passes when it reaches [passAt]. */
        @JvmStatic
        public fun of(value: Double, passAt: Double, reason: String): Score {
            require(value in 0.0..1.0) { "A score is from 0 to 1; got $value." }
            return Score(value, value >= passAt, reason, true)
        }

        internal fun restored(value: Double, passed: Boolean, reason: String, applicable: Boolean): Score =
            Score(value, passed, reason, applicable)

        /** The scorer does not apply to the case (its expectation is missing). */
        @JvmStatic
        public fun notApplicable(reason: String): Score = Score(0.0, true, reason, false)
    }
}
