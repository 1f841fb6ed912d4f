package dev.trellis.test.replay

import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.chat.response.PartialResponse
import dev.langchain4j.model.chat.response.PartialResponseContext
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.langchain4j.model.chat.response.StreamingHandle
import java.util.Collections

/** A chat model that records [real]'s calls into [cassette], or replays them from it when [real] is null. */
internal class CassetteChatModel(private val cassette: Cassette, private val real: ChatModel?) : ChatModel {
    init {
        cassette.requireReal(real, "chat model")
    }

    override fun doChat(chatRequest: ChatRequest): ChatResponse {
        val request = record(chatRequest, cassette::redact)
        if (real == null) {
            val interaction = cassette.lookup(Interaction.CHAT, request.lines())
            interaction.error?.let { throw RecordedFailureException(it.type, it.message) }
            return interaction.response!!.toResponse()
        }
        val response =
            try {
                real.chat(chatRequest)
            } catch (e: Exception) {
                cassette.add(Interaction(Interaction.CHAT, request, error = cassette.errorOf(e)))
                throw e
            }
        cassette.add(Interaction(Interaction.CHAT, request, record(response, null, cassette::redact)))
        return response
    }

    override fun toString(): String = "CassetteChatModel(${cassette.path}, ${cassette.mode})"
}

/** A streaming model that records [real]'s streams into [cassette], or replays them when [real] is null. */
internal class CassetteStreamingChatModel(
    private val cassette: Cassette,
    private val real: StreamingChatModel?,
) : StreamingChatModel {
    init {
        cassette.requireReal(real, "streaming chat model")
    }

    override fun doChat(chatRequest: ChatRequest, handler: StreamingChatResponseHandler) {
        val request = record(chatRequest, cassette::redact)
        if (real == null) {
            replay(request, handler)
            return
        }
        val tokens = Collections.synchronizedList(ArrayList<String>())
        real.chat(
            chatRequest,
            object : StreamingChatResponseHandler {
                override fun onPartialResponse(partialResponse: PartialResponse, context: PartialResponseContext) {
                    tokens += partialResponse.text()
                    handler.onPartialResponse(partialResponse, context)
                }

                override fun onPartialResponse(partialResponse: String) {
                    tokens += partialResponse
                    handler.onPartialResponse(partialResponse)
                }

                override fun onCompleteResponse(completeResponse: ChatResponse) {
                    val response = record(completeResponse, tokens.toList(), cassette::redact)
                    cassette.add(Interaction(Interaction.STREAM, request, response))
                    handler.onCompleteResponse(completeResponse)
                }

                override fun onError(error: Throwable) {
                    cassette.add(Interaction(Interaction.STREAM, request, error = cassette.errorOf(error)))
                    handler.onError(error)
                }
            },
        )
    }

    private fun replay(request: RecordedRequest, handler: StreamingChatResponseHandler) {
        val interaction =
            try {
                cassette.lookup(Interaction.STREAM, request.lines())
            } catch (e: CassetteMismatchException) {
                handler.onError(e)
                return
            }
        interaction.error?.let {
            handler.onError(RecordedFailureException(it.type, it.message))
            return
        }
        val response = interaction.response!!
        var cancelled = false
        val handle = object : StreamingHandle {
            override fun cancel() {
                cancelled = true
            }

            override fun isCancelled(): Boolean = cancelled
        }
        for (token in response.tokens ?: listOfNotNull(response.text)) {
            if (cancelled) return
            handler.onPartialResponse(PartialResponse(token), PartialResponseContext(handle))
        }
        handler.onCompleteResponse(response.toResponse())
    }

    override fun toString(): String = "CassetteStreamingChatModel(${cassette.path}, ${cassette.mode})"
}
