package dev.trellis.test.eval

/** How one case of an evaluation went. */
public class CaseResult internal constructor(
    /** The case's id. */
    public val id: String,
    /** Whether it passed: it ran, and every scorer that applies passed. */
    public val passed: Boolean,
    /** The mean of the applicable scores (0 when it failed to run). */
    public val score: Double,
    /** Each scorer's score, by scorer name (not applicable ones included). */
    public val scores: Map<String, Score>,
    /** The output's text (empty when it did not run). */
    public val output: String,
    /** Why it did not run: the target's error, or the budget spent; null when it ran. */
    public val error: String?,
    /** Whether it was skipped because the budget was spent. */
    public val skipped: Boolean,
    /** What it cost. */
    public val cost: Double,
    /** How long it took, in milliseconds. */
    public val millis: Long,
    internal val timelineHtml: String?,
) {
    override fun toString(): String =
        "CaseResult($id, ${if (passed) "passed" else "failed"}, score=${"%.2f".format(
            score,
        )}${error?.let { ", $it" } ?: ""})"
}
