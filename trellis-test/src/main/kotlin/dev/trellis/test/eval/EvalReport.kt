package dev.trellis.test.eval

import java.nio.file.Files
import java.nio.file.Path

/**
 * The results of an [Evaluation]: each case's scores, the [passRate] and [meanScore], as a console table
 * ([toTable]), JSON ([toJson], read back by [fromJson] for [EvalComparison]) or an HTML page with each case's
 * timeline ([toHtml]). [assertPassRate] fails the test (and the build) below a threshold.
 */
public class EvalReport internal constructor(
    /** The eval set's name. */
    public val name: String,
    /** The cases' results, in the set's order. */
    public val cases: List<CaseResult>,
) {
    /** The share of cases that passed, from 0 to 1 (1 for no cases). */
    public val passRate: Double get() = if (cases.isEmpty()) 1.0 else cases.count { it.passed }.toDouble() / cases.size

    /** The mean case score, from 0 to 1. */
    public val meanScore: Double get() = if (cases.isEmpty()) 1.0 else cases.map { it.score }.average()

    /** The cases that failed (skipped ones included). */
    public val failures: List<CaseResult> get() = cases.filter { !it.passed }

    /** The total cost of the cases. */
    public val cost: Double get() = cases.sumOf { it.cost }

    /** The result of case [id]; fails naming the cases there are. */
    public fun case(id: String): CaseResult = cases.firstOrNull { it.id == id }
        ?: throw NoSuchElementException("No case '$id' in report '$name'; its cases: ${cases.map { it.id }}.")

    /**
     * Fails with [EvalThresholdException] when the [passRate] is below [minimum] (0 to 1), listing the failed
     * cases and why.
     */
    public fun assertPassRate(minimum: Double): EvalReport = apply {
        require(minimum in 0.0..1.0) { "A pass rate threshold is from 0 to 1; got $minimum." }
        if (passRate < minimum) {
            throw EvalThresholdException(
                "Eval '$name' passed ${percent(passRate)} of ${cases.size} cases, below the threshold of " +
                    "${percent(minimum)}. Failed cases:\n" + failures.joinToString("\n") { "  ${it.id}: ${why(it)}" },
            )
        }
    }

    /** A plain-text table: one row per case (id, result, score, each scorer, cost), then the totals. */
    public fun toTable(): String {
        val scorerNames = cases.flatMap { it.scores.keys }.distinct()
        val header = listOf("case", "result", "score") + scorerNames + listOf("cost", "why")
        val rows = cases.map { c ->
            listOf(
                c.id,
                if (c.skipped) {
                    "SKIP"
                } else if (c.passed) {
                    "pass"
                } else {
                    "FAIL"
                },
                "%.2f".format(c.score),
            ) +
                scorerNames.map { n ->
                    c.scores[n]?.let { s -> if (!s.applicable) "-" else "%.2f".format(s.value) }
                        ?: "-"
                } +
                listOf("%.1f".format(c.cost), if (c.passed) "" else Scorers.short(why(c)))
        }
        val widths = header.indices.map { i -> (rows.map { it[i] } + header[i]).maxOf { it.length } }

        fun line(cells: List<String>) = cells.mapIndexed { i, cell ->
            cell.padEnd(
                widths[i],
            )
        }.joinToString("  ").trimEnd()
        return buildString {
            appendLine(line(header))
            appendLine(widths.joinToString("  ") { "-".repeat(it) })
            rows.forEach { appendLine(line(it)) }
            append("$name: ${cases.count { it.passed }}/${cases.size} passed (${percent(passRate)}), mean score ")
            append("%.2f".format(meanScore)).append(", cost ").append("%.1f".format(cost))
        }
    }

    /** The report as pretty-printed JSON (timelines left out). */
    public fun toJson(): String = REPORT_JSON.encodeToString(
        ReportFile.serializer(),
        ReportFile(
            name,
            passRate,
            meanScore,
            cases.map { c ->
                CaseFile(
                    c.id,
                    c.passed,
                    c.score,
                    c.scores.mapValues { (_, s) -> ScoreFile(s.value, s.passed, s.reason, s.applicable) },
                    c.output,
                    c.error,
                    c.skipped,
                    c.cost,
                    c.millis,
                )
            },
        ),
    )

    /** An HTML page: the table, and per case its scores, output and run timeline (collapsed). */
    public fun toHtml(): String = ReportHtml.render(this)

    /** Writes [toJson] to [path]; returns it. */
    public fun writeJson(path: Path): Path = write(path, toJson())

    /** Writes [toHtml] to [path]; returns it. */
    public fun writeHtml(path: Path): Path = write(path, toHtml())

    override fun toString(): String = "EvalReport($name, ${cases.count { it.passed }}/${cases.size} passed)"

    private fun write(path: Path, text: String): Path {
        path.toAbsolutePath().parent?.let { Files.createDirectories(it) }
        return Files.writeString(path, text)
    }

    /** Reads reports. */
    public companion object {
        /** The report [json] (as [toJson] wrote it), to compare with another. */
        @JvmStatic
        public fun fromJson(json: String): EvalReport {
            val file = REPORT_JSON.decodeFromString(ReportFile.serializer(), json)
            return EvalReport(
                file.name,
                file.cases.map { c ->
                    CaseResult(
                        c.id,
                        c.passed,
                        c.score,
                        c.scores.mapValues { (_, s) -> Score.restored(s.value, s.passed, s.reason, s.applicable) },
                        c.output,
                        c.error,
                        c.skipped,
                        c.cost,
                        c.millis,
                        null,
                    )
                },
            )
        }

        /** The report in the JSON file at [path]. */
        @JvmStatic
        public fun readJson(path: Path): EvalReport = fromJson(Files.readString(path))

        internal fun percent(rate: Double): String = "%.0f%%".format(rate * 100)

        internal fun why(c: CaseResult): String = c.error
            ?: c.scores.filterValues { it.applicable && !it.passed }.entries.joinToString(
                "; ",
            ) { "${it.key}: ${it.value.reason}" }
    }
}
