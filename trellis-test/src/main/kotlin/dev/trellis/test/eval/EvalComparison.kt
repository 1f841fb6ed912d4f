package dev.trellis.test.eval

/**
 * Two reports of the same eval set compared case by case: [regressions] (a case that passed and now fails, or
 * whose score dropped by more than the tolerance) first, then [improvements], new and removed cases.
 *
 * ```kotlin
 * val comparison = EvalComparison.of(EvalReport.readJson(baseline), report)
 * println(comparison.toTable())
 * comparison.assertNoRegressions()
 * ```
 */
public class EvalComparison private constructor(
    /** The earlier report. */
    public val baseline: EvalReport,
    /** The later report. */
    public val current: EvalReport,
    private val tolerance: Double,
) {
    /** One case's change. */
    public class Change internal constructor(
        /** The case. */
        public val id: String,
        /** Its score before, null when it is new. */
        public val before: Double?,
        /** Its score now, null when it was removed. */
        public val after: Double?,
        /** What happened: `regressed`, `improved`, `unchanged`, `new` or `removed`. */
        public val kind: String,
        /** Why (the case's failure now, for a regression). */
        public val detail: String,
    ) {
        override fun toString(): String = "$kind $id ${before ?: "-"} -> ${after ?: "-"} $detail".trim()
    }

    /** Every case's change: regressions first, then improvements, new, removed and unchanged cases. */
    public val changes: List<Change> = buildChanges()

    /** The cases that got worse. */
    public val regressions: List<Change> get() = changes.filter { it.kind == REGRESSED }

    /** The cases that got better. */
    public val improvements: List<Change> get() = changes.filter { it.kind == IMPROVED }

    /** A plain-text table of the changes (regressions first) and the pass rates before and after. */
    public fun toTable(): String = buildString {
        appendLine(
            "${baseline.name}: pass rate ${EvalReport.percent(
                baseline.passRate,
            )} -> ${EvalReport.percent(current.passRate)}, " +
                "${regressions.size} regression(s), ${improvements.size} improvement(s)",
        )
        val width = changes.maxOfOrNull { it.id.length } ?: 4
        for (c in changes.filter { it.kind != UNCHANGED }) {
            append(c.kind.padEnd(10)).append(c.id.padEnd(width + 2))
            append(
                c.before?.let { "%.2f".format(it) } ?: "-",
            ).append(" -> ").append(c.after?.let { "%.2f".format(it) } ?: "-")
            if (c.detail.isNotEmpty()) append("  ").append(c.detail)
            appendLine()
        }
    }.trimEnd()

    /** Fails with [EvalThresholdException] when a case regressed, listing the regressions. */
    public fun assertNoRegressions(): EvalComparison = apply {
        if (regressions.isNotEmpty()) throw EvalThresholdException("Eval '${current.name}' regressed:\n" + toTable())
    }

    private fun buildChanges(): List<Change> {
        val before = baseline.cases.associateBy { it.id }
        val after = current.cases.associateBy { it.id }
        val all = (baseline.cases.map { it.id } + current.cases.map { it.id }).distinct()
        return all.map { id ->
            val b = before[id]
            val a = after[id]
            when {
                b == null -> Change(id, null, a!!.score, NEW, "")
                a == null -> Change(id, b.score, null, REMOVED, "")
                (b.passed && !a.passed) || a.score < b.score - tolerance -> Change(
                    id,
                    b.score,
                    a.score,
                    REGRESSED,
                    EvalReport.why(a),
                )
                (!b.passed && a.passed) || a.score > b.score + tolerance -> Change(id, b.score, a.score, IMPROVED, "")
                else -> Change(id, b.score, a.score, UNCHANGED, "")
            }
        }.sortedBy { ORDER.indexOf(it.kind) }
    }

    override fun toString(): String =
        "EvalComparison(${regressions.size} regressions, ${improvements.size} improvements)"

    /** Compares reports. */
    public companion object {
        private const val REGRESSED = "regressed"
        private const val IMPROVED = "improved"
        private const val UNCHANGED = "unchanged"
        private const val NEW = "new"
        private const val REMOVED = "removed"
        private val ORDER = listOf(REGRESSED, IMPROVED, NEW, REMOVED, UNCHANGED)

        /** [current] against [baseline]; a score change within [tolerance] (0.01 by default) is no change. */
        @JvmStatic
        @JvmOverloads
        public fun of(baseline: EvalReport, current: EvalReport, tolerance: Double = 0.01): EvalComparison =
            EvalComparison(baseline, current, tolerance)
    }
}
