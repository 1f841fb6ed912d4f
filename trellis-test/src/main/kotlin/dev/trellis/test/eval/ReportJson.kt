package dev.trellis.test.eval

import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json

/** The JSON form of a report (what [EvalReport.toJson] writes and [EvalReport.fromJson] reads). */
@Serializable
internal class ReportFile(
    val name: String,
    val passRate: Double,
    val meanScore: Double,
    val cases: List<CaseFile>,
)

@Serializable
internal class CaseFile(
    val id: String,
    val passed: Boolean,
    val score: Double,
    val scores: Map<String, ScoreFile> = emptyMap(),
    val output: String = "",
    val error: String? = null,
    val skipped: Boolean = false,
    val cost: Double = 0.0,
    val millis: Long = 0,
)

@Serializable
internal class ScoreFile(val value: Double, val passed: Boolean, val reason: String, val applicable: Boolean = true)

@OptIn(kotlinx.serialization.ExperimentalSerializationApi::class)
internal val REPORT_JSON = Json {
    prettyPrint = true
    prettyPrintIndent = "  "
    explicitNulls = false
    ignoreUnknownKeys = true
}
