package dev.trellis.samples

import com.github.ajalt.clikt.core.UsageError
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.openai.OpenAiChatModel
import dev.langchain4j.model.openai.OpenAiStreamingChatModel
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import java.time.Duration

/**
 * The models that plan, write and review in the research sample (`--model`): [chat] plans and reviews, [streaming]
 * writes the drafts token by token. [scripted] needs no network; [openAi] talks to an OpenAI-compatible endpoint.
 */
internal class ResearchModels(val name: String, val chat: ChatModel, val streaming: StreamingChatModel) {
    companion object {
        const val API_KEY: String = "OPENAI_API_KEY"
        const val MODEL: String = "OPENAI_MODEL"
        const val BASE_URL: String = "OPENAI_BASE_URL"
        const val DEFAULT_BASE_URL: String = "https://api.openai.com/v1"

        /** Scripted models: the plan, drafts and reviews the sample always had, without a network. */
        fun scripted(): ResearchModels = ResearchModels("scripted", ScriptedResearch.chat(), ScriptedResearch.writer())

        /**
         * Models of an OpenAI-compatible endpoint: [API_KEY] and [MODEL] are required, [BASE_URL] defaults to
         * [DEFAULT_BASE_URL]. Fails naming the variables that are not set.
         */
        fun openAi(env: (String) -> String?): ResearchModels {
            val missing = listOf(API_KEY, MODEL).filter { env(it).isNullOrBlank() }
            if (missing.isNotEmpty()) {
                throw UsageError(
                    "--model openai needs the environment variables $API_KEY and $MODEL (and optionally " +
                        "$BASE_URL, default $DEFAULT_BASE_URL); not set: ${missing.joinToString()}.",
                )
            }
            val baseUrl = env(BASE_URL)?.takeIf { it.isNotBlank() } ?: DEFAULT_BASE_URL
            val chat =
                OpenAiChatModel.builder().baseUrl(baseUrl).apiKey(env(API_KEY)).modelName(env(MODEL))
                    .timeout(TIMEOUT).maxRetries(0).build().let { EndpointChatModel(it, baseUrl) }
            val streaming =
                OpenAiStreamingChatModel.builder().baseUrl(baseUrl).apiKey(env(API_KEY)).modelName(env(MODEL))
                    .timeout(TIMEOUT).build()
            return ResearchModels("openai (${env(MODEL)} at $baseUrl)", chat, streaming)
        }

        /** The models `--model [name]` names. */
        fun named(name: String, env: (String) -> String?): ResearchModels = when (name) {
            "openai" -> openAi(env)
            else -> scripted()
        }

        /** The choices of `--model`. */
        val names: List<String> = listOf("scripted", "openai")

        private val TIMEOUT: Duration = Duration.ofSeconds(60)
    }
}

/** The last user message of [request]: the prompts of the research nodes. */
internal fun ChatRequest.prompt(): String =
    messages().filterIsInstance<UserMessage>().lastOrNull()?.singleText().orEmpty()

/**
 * The scripted models of the research sample, made with the test kit: a fixed plan; a review that asks for a
 * revision until draft [ResearchSample.ACCEPT_AT]; drafts streamed word by word.
 */
internal object ScriptedResearch {
    private val words = "a clear report with sources citations and a summary".split(' ')

    /** Plans and reviews. */
    fun chat(): ChatModel = ScriptedChatModel.builder()
        .whenPrompt("Review") { request ->
            val number = Regex("draft (\\d+)").find(request.prompt())?.groupValues?.get(1)?.toInt() ?: 0
            ScriptedAnswer.text(
                if (number >=
                    ResearchSample.ACCEPT_AT
                ) {
                    "ACCEPT draft $number"
                } else {
                    "REVISE draft $number: add more sources"
                },
            )
        }
        .whenPrompt("", ScriptedAnswer.text("search web, papers, news and code; summarise; write; review"))
        .build()

    /** Writes a draft word by word. */
    fun writer(): StreamingChatModel = ScriptedChatModel.builder()
        .whenPrompt(
            "",
            ScriptedAnswer.tokens(
                *words.mapIndexed { i, w ->
                    if (i <
                        words.lastIndex
                    ) {
                        "$w "
                    } else {
                        w
                    }
                }.toTypedArray(),
            ),
        )
        .buildStreaming()
}
