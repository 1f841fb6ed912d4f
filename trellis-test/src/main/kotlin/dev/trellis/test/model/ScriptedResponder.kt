package dev.trellis.test.model

import dev.langchain4j.model.chat.request.ChatRequest

/**
 * Computes a scripted model's answer from the request (an answer that depends on the prompt, such as a reviewer
 * that accepts the third draft).
 *
 * ```kotlin
 * ScriptedChatModel.builder().whenPrompt("Review") { request -> ScriptedAnswer.text("ACCEPT") }
 * ```
 */
public fun interface ScriptedResponder {
    /** The answer to [request]. */
    public fun answer(request: ChatRequest): ScriptedAnswer
}
