package dev.trellis.test.model

import dev.langchain4j.agent.tool.ToolExecutionRequest
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.output.TokenUsage
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import java.time.Duration

/**
 * One answer of a scripted model: a text, tool calls, a JSON document (structured output), a stream of tokens, a
 * failure, or a call that never answers; each may take a [latency] (virtual time under a test scheduler) and
 * report token usage.
 *
 * ```kotlin
 * ScriptedAnswer.text("Paris")
 * ScriptedAnswer.toolCall("weather", """{"city":"Paris"}""")
 * ScriptedAnswer.json("""{"category":"billing"}""")
 * ScriptedAnswer.tokens("Hel", "lo").after(Duration.ofSeconds(2))
 * ScriptedAnswer.failure(IOException("503"))
 * ```
 */
public class ScriptedAnswer private constructor(
    internal val text: String?,
    internal val calls: List<ToolExecutionRequest>,
    internal val tokens: List<String>,
    internal val error: Exception?,
    internal val failAfterTokens: Int,
    internal val hangs: Boolean,
    /** How long the call takes before it answers (virtual time under a test scheduler, else real time). */
    public val latency: Duration,
    internal val usage: TokenUsage?,
) {
    /** This answer, taking [latency] before it answers (virtual time under a test scheduler). */
    public fun after(latency: Duration): ScriptedAnswer {
        require(!latency.isNegative) { "A scripted latency cannot be negative ($latency); pass zero or more." }
        return ScriptedAnswer(text, calls, tokens, error, failAfterTokens, hangs, latency, usage)
    }

    /** This answer, reporting [input] and [output] tokens as its usage. */
    public fun withUsage(input: Int, output: Int): ScriptedAnswer =
        ScriptedAnswer(text, calls, tokens, error, failAfterTokens, hangs, latency, TokenUsage(input, output))

    /** This stream of tokens, failing with [error] once its tokens were streamed (a stream broken half-way). */
    public fun thenFail(error: Exception): ScriptedAnswer {
        check(tokens.isNotEmpty()) { "thenFail applies to ScriptedAnswer.tokens(...); use failure(error) for others." }
        return ScriptedAnswer(text, calls, tokens, error, tokens.size, hangs, latency, usage)
    }

    /** The complete response of this answer; throws its failure. */
    internal fun response(callNumber: Int): ChatResponse {
        error?.takeIf { failAfterTokens < 0 }?.let { throw it }
        val ai =
            when {
                calls.isNotEmpty() && text != null -> AiMessage.from(text, renumber(callNumber))
                calls.isNotEmpty() -> AiMessage.from(renumber(callNumber))
                else -> AiMessage.from(text ?: tokens.joinToString(""))
            }
        return ChatResponse.builder().aiMessage(ai).tokenUsage(usage).build()
    }

    /** Tool calls without an id get `call-<call number>-<index>`, unique in the conversation. */
    private fun renumber(callNumber: Int): List<ToolExecutionRequest> = calls.mapIndexed { i, call ->
        if (call.id() != null) {
            call
        } else {
            ToolExecutionRequest.builder().id("call-$callNumber-$i").name(call.name()).arguments(call.arguments())
                .build()
        }
    }

    override fun toString(): String = when {
        hangs -> "ScriptedAnswer(hang)"
        error != null && failAfterTokens < 0 -> "ScriptedAnswer(failure: $error)"
        calls.isNotEmpty() -> "ScriptedAnswer(tool calls: ${calls.map { "${it.name()}(${it.arguments()})" }})"
        tokens.isNotEmpty() -> "ScriptedAnswer(tokens: $tokens${if (error != null) " then $error" else ""})"
        else -> "ScriptedAnswer(text: $text)"
    }

    /** Makes answers. */
    public companion object {
        private val NONE = Duration.ZERO

        /** Answers [text]. */
        @JvmStatic
        public fun text(text: String): ScriptedAnswer =
            ScriptedAnswer(text, emptyList(), emptyList(), null, -1, false, NONE, null)

        /**
         * Answers [json], a JSON document, as the text of the response: what a model asked for structured output
         * (`ResponseFormat.JSON`, a JSON schema) answers. Fails here when [json] is not valid JSON.
         */
        @JvmStatic
        public fun json(json: String): ScriptedAnswer {
            try {
                Json.parseToJsonElement(json)
            } catch (e: IllegalArgumentException) {
                throw IllegalArgumentException(
                    "ScriptedAnswer.json needs a JSON document, but got: $json (${e.message}); fix the JSON, or use " +
                        "ScriptedAnswer.text for plain text.",
                    e,
                )
            }
            return text(json)
        }

        /** Answers [json] as its text (structured output). */
        @JvmStatic
        public fun json(json: JsonElement): ScriptedAnswer = text(json.toString())

        /** Asks for one tool call: tool [name] with [arguments], a JSON object as text. */
        @JvmStatic
        @JvmOverloads
        public fun toolCall(name: String, arguments: String = "{}"): ScriptedAnswer = toolCalls(call(name, arguments))

        /** Asks for several tool calls at once (a model's parallel tool calls). Make each with [call]. */
        @JvmStatic
        public fun toolCalls(vararg calls: ToolExecutionRequest): ScriptedAnswer {
            require(calls.isNotEmpty()) { "toolCalls needs at least one call; make them with ScriptedAnswer.call." }
            return ScriptedAnswer(null, calls.toList(), emptyList(), null, -1, false, NONE, null)
        }

        /** One tool call for [toolCalls]; its id is made unique per call when not given. */
        @JvmStatic
        @JvmOverloads
        public fun call(name: String, arguments: String = "{}", id: String? = null): ToolExecutionRequest =
            ToolExecutionRequest.builder().id(id).name(name).arguments(arguments).build()

        /**
         * Streams [tokens] one by one (a streaming model), then completes with their concatenation; a blocking
         * model answers the concatenation at once.
         */
        @JvmStatic
        public fun tokens(vararg tokens: String): ScriptedAnswer {
            require(tokens.isNotEmpty()) { "tokens needs at least one token; use text(\"\") for an empty answer." }
            return ScriptedAnswer(null, emptyList(), tokens.toList(), null, -1, false, NONE, null)
        }

        /** Fails the call with [error] (a model that is down, a rate limit, a content filter...). */
        @JvmStatic
        public fun failure(error: Exception): ScriptedAnswer =
            ScriptedAnswer(null, emptyList(), emptyList(), error, -1, false, NONE, null)

        /**
         * Never answers: the call blocks until its thread is interrupted (a blocking model) or its stream is
         * cancelled (a streaming model). Tests cancellation, timeouts and crashes in the middle of a call.
         */
        @JvmStatic
        public fun hang(): ScriptedAnswer = ScriptedAnswer(null, emptyList(), emptyList(), null, -1, true, NONE, null)
    }
}
