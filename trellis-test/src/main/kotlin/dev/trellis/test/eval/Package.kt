/*
 * Package dev.trellis.test.eval — eval sets (`docs/testing.md`, "Eval sets"): cases read from JSONL (`EvalSet.kt`,
 * `EvalCase.kt`), scorers (`Scorer.kt`, `Scorers.kt`, `JsonSchemas.kt`, `LlmJudge.kt`), the run of a set with a
 * concurrency limit and a budget (`Evaluation.kt`, `EvalTarget.kt`), reports (`EvalReport.kt`, `ReportJson.kt`,
 * `ReportHtml.kt`), thresholds (`EvalThresholdException.kt`) and comparisons of two reports (`EvalComparison.kt`).
 *
 * May call: `trajectory`, `internal` and the runtime's public API.
 */
package dev.trellis.test.eval
