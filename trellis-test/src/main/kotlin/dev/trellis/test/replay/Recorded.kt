package dev.trellis.test.replay

import dev.langchain4j.agent.tool.ToolExecutionRequest
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.output.FinishReason
import dev.langchain4j.model.output.TokenUsage
import dev.trellis.test.internal.textOf
import kotlinx.serialization.Serializable

/** The file: a format version and the interactions, in the order they happened. */
@Serializable
internal class CassetteFile(val format: Int, val interactions: List<Interaction> = emptyList())

/** One call: to a chat model (`chat`), a streaming model (`stream`) or a tool (`tool`). */
@Serializable
internal class Interaction(
    val kind: String,
    val request: RecordedRequest? = null,
    val response: RecordedResponse? = null,
    val tool: String? = null,
    val arguments: String? = null,
    val result: String? = null,
    val error: RecordedError? = null,
) {
    /** The lines a request is compared by, and shown in a diff. */
    fun requestLines(): List<String> = when (kind) {
        TOOL -> listOf("tool $tool($arguments)")
        else -> request!!.lines()
    }

    companion object {
        const val CHAT = "chat"
        const val STREAM = "stream"
        const val TOOL = "tool"
    }
}

@Serializable
internal class RecordedRequest(
    val messages: List<RecordedMessage>,
    val tools: List<String> = emptyList(),
    val responseFormat: String? = null,
) {
    fun lines(): List<String> = buildList {
        for (m in messages) add("${m.role}: ${m.text ?: ""}")
        if (tools.isNotEmpty()) add("tools: ${tools.joinToString()}")
        responseFormat?.let { add("response format: $it") }
    }
}

@Serializable
internal class RecordedMessage(val role: String, val text: String? = null)

@Serializable
internal class RecordedToolCall(val id: String? = null, val name: String, val arguments: String)

@Serializable
internal class RecordedResponse(
    val text: String? = null,
    val toolCalls: List<RecordedToolCall> = emptyList(),
    val tokens: List<String>? = null,
    val inputTokens: Int? = null,
    val outputTokens: Int? = null,
    val finishReason: String? = null,
) {
    fun toResponse(): ChatResponse {
        val calls = toolCalls.map {
            ToolExecutionRequest.builder().id(it.id).name(it.name).arguments(it.arguments).build()
        }
        val ai = when {
            calls.isEmpty() -> AiMessage.from(text ?: "")
            text == null -> AiMessage.from(calls)
            else -> AiMessage.from(text, calls)
        }
        val builder = ChatResponse.builder().aiMessage(ai)
        if (inputTokens != null || outputTokens != null) builder.tokenUsage(TokenUsage(inputTokens, outputTokens))
        finishReason?.let { reason -> FinishReason.entries.firstOrNull { it.name == reason } }?.let {
            builder.finishReason(it)
        }
        return builder.build()
    }
}

@Serializable
internal class RecordedError(val type: String, val message: String? = null)

/** The request as recorded: every message's role and text, the tools offered, the response format. */
internal fun record(request: ChatRequest, redact: (String) -> String): RecordedRequest = RecordedRequest(
    request.messages().map { RecordedMessage(roleOf(it), redact(textOf(it))) },
    request.toolSpecifications().orEmpty().map { it.name() },
    request.responseFormat()?.let { format ->
        listOfNotNull(format.type()?.name, format.jsonSchema()?.name()).joinToString(" ")
    },
)

internal fun record(response: ChatResponse, tokens: List<String>?, redact: (String) -> String): RecordedResponse {
    val ai = response.aiMessage()
    return RecordedResponse(
        ai.text()?.let(redact),
        ai.toolExecutionRequests().map { RecordedToolCall(it.id(), it.name(), redact(it.arguments())) },
        tokens?.map(redact),
        response.tokenUsage()?.inputTokenCount(),
        response.tokenUsage()?.outputTokenCount(),
        response.finishReason()?.name,
    )
}

private fun roleOf(message: ChatMessage): String = when (message) {
    is SystemMessage -> "system"
    is UserMessage -> "user"
    is AiMessage -> "ai"
    is ToolExecutionResultMessage -> "tool result"
    else -> message.type().name.lowercase()
}
