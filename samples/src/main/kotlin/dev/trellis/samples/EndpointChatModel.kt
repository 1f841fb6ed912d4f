package dev.trellis.samples

import dev.langchain4j.model.ModelProvider
import dev.langchain4j.model.chat.Capability
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.request.ChatRequestParameters
import dev.langchain4j.model.chat.response.ChatResponse
import java.net.URI

/**
 * [delegate] with errors that name the endpoint it talks to: a client error such as `java.net.ConnectException`
 * alone says neither where nor what, so the failure of a `--model openai` run reads
 * `OpenAI-compatible endpoint http://localhost:11434/v1 (host localhost, port 11434) failed: ConnectException ...`.
 */
internal class EndpointChatModel(private val delegate: ChatModel, private val baseUrl: String) : ChatModel {
    override fun chat(chatRequest: ChatRequest): ChatResponse =
        try {
            delegate.chat(chatRequest)
        } catch (e: RuntimeException) {
            throw EndpointException(describeEndpointFailure(baseUrl, e), e)
        }

    override fun defaultRequestParameters(): ChatRequestParameters = delegate.defaultRequestParameters()

    override fun supportedCapabilities(): Set<Capability> = delegate.supportedCapabilities()

    override fun provider(): ModelProvider = delegate.provider()
}

/** A model endpoint failed; the message names its URL, host and port and the underlying error. */
internal class EndpointException(message: String, cause: Throwable) : RuntimeException(message, cause)

/** `OpenAI-compatible endpoint URL (host H, port P) failed: the causes, outermost first`. */
internal fun describeEndpointFailure(baseUrl: String, error: Throwable): String {
    val uri = runCatching { URI(baseUrl) }.getOrNull()
    val port = when {
        uri == null -> null
        uri.port != -1 -> uri.port
        uri.scheme == "https" -> 443
        uri.scheme == "http" -> 80
        else -> null
    }
    val where = if (uri?.host != null) " (host ${uri.host}, port $port)" else ""
    val causes = generateSequence(error) { it.cause.takeIf { cause -> cause !== it } }
        .map { e -> e.javaClass.simpleName + (e.message?.let { ": $it" } ?: "") }
        .distinct()
        .take(MAX_CAUSES)
        .joinToString(" <- ")
    return "OpenAI-compatible endpoint $baseUrl$where failed: $causes"
}

private const val MAX_CAUSES = 4
