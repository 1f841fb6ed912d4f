/*
 * Package dev.trellis.test.model — scripted LangChain4j models (`docs/testing.md`, "Scripted models"): a builder
 * (`ScriptedModelBuilder.kt`) of a `ChatModel` or `StreamingChatModel` (`ScriptedChatModel.kt`,
 * `ScriptedStreamingChatModel.kt`) answering per call or by prompt (`Script.kt`, `ScriptedResponder.kt`) with text,
 * JSON, tool calls, token streams, failures or latency (`ScriptedAnswer.kt`); an unscripted call fails naming its
 * prompt (`UnscriptedCallException.kt`).
 *
 * May call: `internal` and LangChain4j.
 */
package dev.trellis.test.model
