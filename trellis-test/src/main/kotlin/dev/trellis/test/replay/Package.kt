/*
 * Package dev.trellis.test.replay — record and replay (`docs/testing.md`, "Cassettes"): a cassette file
 * (`Cassette.kt`, `Recorded.kt`) that wraps real models and tools to record their calls, redacting secrets
 * (`Redaction.kt`), and answers them again in replay (`CassetteModels.kt`, `CassetteMode.kt`); a changed call fails
 * naming the first divergent request (`CassetteMismatchException.kt`).
 *
 * May call: `internal`, trellis-langchain4j's `Tools` and LangChain4j.
 */
package dev.trellis.test.replay
