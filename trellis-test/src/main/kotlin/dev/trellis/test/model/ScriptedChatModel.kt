package dev.trellis.test.model

import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.trellis.test.internal.promptOf

/**
 * A LangChain4j [ChatModel] whose answers are scripted: in call order, or by what the prompt contains. It records
 * every request; a call that nothing answers fails with [UnscriptedCallException] naming its prompt.
 *
 * ```kotlin
 * val model = ScriptedChatModel.builder()
 *     .whenPrompt("Review", ScriptedAnswer.text("ACCEPT"))
 *     .answer(ScriptedAnswer.toolCall("search", """{"q":"sky"}"""), ScriptedAnswer.text("Rayleigh scattering"))
 *     .build()
 * ```
 */
public class ScriptedChatModel internal constructor(private val script: Script) : ChatModel, ScriptedModel {
    override val requests: List<ChatRequest> get() = script.requests.toList()
    override val prompts: List<String> get() = requests.map(::promptOf)

    override fun doChat(chatRequest: ChatRequest): ChatResponse {
        val (number, answer) = script.next(chatRequest)
        if (answer.hangs) {
            Thread.sleep(Long.MAX_VALUE) // until interrupted: a cancelled run interrupts its model calls
        }
        return answer.response(number)
    }

    override fun assertAllAnswersUsed() {
        val unused = script.unused()
        if (unused.isNotEmpty()) {
            throw AssertionError(
                "The scripted model got ${requests.size} call(s) but ${unused.size} answer(s) were never asked " +
                    "for: $unused. Prompts of the calls it got: $prompts.",
            )
        }
    }

    override fun toString(): String = "ScriptedChatModel(${requests.size} call(s))"

    /** Makes scripted models. */
    public companion object {
        /** A builder of a scripted model: [ScriptedModelBuilder.build] or [ScriptedModelBuilder.buildStreaming]. */
        @JvmStatic
        public fun builder(): ScriptedModelBuilder = ScriptedModelBuilder()

        /** A model that answers [texts], one per call, in order. */
        @JvmStatic
        public fun of(vararg texts: String): ScriptedChatModel = builder().answer(*texts).build()
    }
}
