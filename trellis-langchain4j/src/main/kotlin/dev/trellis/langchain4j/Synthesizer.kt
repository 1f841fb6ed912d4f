package dev.trellis.langchain4j

import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.NodeAction
import java.util.function.Function
import kotlin.time.Duration

/**
 * Declares a synthesizer node [id]: [model] merges the partial answers in [parts] (the writes of a map node, of
 * parallel branches, of a [voting] graph's candidates) into one answer, written to [output]. The model gets
 * [instructions] as the system message, then one user message with the [question] (when given) and the parts,
 * numbered in list order. An empty list fails the attempt (there is nothing to merge). The call charges its tokens to
 * [meters]. From Java, [Synthesizer.action] in a `blockingNode`.
 *
 * ```kotlin
 * val merge = synthesizerNode("merge", model, parts = Report.sections, output = Report.text) { it[Report.topic] }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.synthesizerNode(
    id: String,
    model: ChatModel,
    parts: StateKey<List<String>>,
    output: StateKey<String>,
    instructions: String = Synthesizer.DEFAULT_INSTRUCTIONS,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    question: ((State) -> String)? = null,
): NodeRef = node(id, timeout, retry, description ?: "synthesizer of ${parts.name}") {
    val messages = Synthesizer.messages(instructions, question?.invoke(state), get(parts), nodeId)
    set(
        output,
        chatMetered(model, ChatRequest.builder().messages(messages).build(), meters).aiMessage().text().orEmpty(),
    )
}

/** The synthesizer's prompt and its Java form. */
public object Synthesizer {
    /** The default system message of a synthesizer. */
    public const val DEFAULT_INSTRUCTIONS: String =
        "Merge the partial answers below into one complete, consistent answer. Keep every fact they support, drop " +
            "repetitions, and resolve contradictions by saying what each part claims. Answer with the merged text only."

    /**
     * A synthesizer for a Java `blockingNode`: as [synthesizerNode], [question] (may be null) giving the question
     * from the state.
     *
     * ```java
     * builder.blockingNode("merge", Synthesizer.action(model, sections, report, Synthesizer.DEFAULT_INSTRUCTIONS,
     *     s -> s.get(topic), TokenMeters.DEFAULT));
     * ```
     */
    @JvmStatic
    @JvmOverloads
    public fun action(
        model: ChatModel,
        parts: StateKey<List<String>>,
        output: StateKey<String>,
        instructions: String = DEFAULT_INSTRUCTIONS,
        question: Function<State, String>? = null,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = NodeAction { context ->
        val messages = messages(instructions, question?.apply(context.state), context.get(parts), context.nodeId)
        val response = model.chat(ChatRequest.builder().messages(messages).build())
        meters.charge(response, context::charge)
        context.set(output, response.aiMessage().text().orEmpty())
    }

    internal fun messages(
        instructions: String,
        question: String?,
        parts: List<String>,
        nodeId: String,
    ): List<ChatMessage> {
        require(parts.isNotEmpty()) { "Synthesizer node '$nodeId' got no partial answers to merge." }
        val numbered = parts.withIndex().joinToString("\n\n") { (i, part) -> "Part ${i + 1}:\n$part" }
        val text = if (question == null) numbered else "Question: $question\n\n$numbered"
        return listOf(SystemMessage.from(instructions), UserMessage.from(text))
    }
}
