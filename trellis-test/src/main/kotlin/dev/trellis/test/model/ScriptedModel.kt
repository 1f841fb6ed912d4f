package dev.trellis.test.model

import dev.langchain4j.model.chat.request.ChatRequest

/**
 * What the scripted models have in common: the requests they got, in call order, and a check that the script was
 * used up. Made by [ScriptedChatModel.builder].
 */
public sealed interface ScriptedModel {
    /** The requests the model got, in call order. */
    public val requests: List<ChatRequest>

    /** The prompts of [requests]: the text of each request's last user message. */
    public val prompts: List<String>

    /**
     * Fails when answers given with [ScriptedModelBuilder.answer] were never asked for (the graph made fewer calls
     * than the test expected), naming them.
     */
    public fun assertAllAnswersUsed()
}
