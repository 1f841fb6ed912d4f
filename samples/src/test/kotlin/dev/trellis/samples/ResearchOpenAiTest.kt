package dev.trellis.samples

import com.github.ajalt.clikt.core.UsageError
import com.github.ajalt.clikt.core.parse
import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.agent.AgentEvent
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonObject
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList

/**
 * `--model openai` against a fake OpenAI-compatible endpoint this test starts (the JDK's HTTP server): the chat
 * completions API, plain and streamed (server-sent events), answering each research prompt. No network.
 */
class ResearchOpenAiTest {
    private val requests = CopyOnWriteArrayList<JsonObject>()
    private val authorizations = CopyOnWriteArrayList<String>()
    private val server: HttpServer =
        HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
            createContext("/v1/chat/completions", ::answer)
            start()
        }
    private val env =
        mapOf(
            ResearchModels.BASE_URL to "http://127.0.0.1:${server.address.port}/v1",
            ResearchModels.API_KEY to "test-key",
            ResearchModels.MODEL to "fake-model",
        )

    @AfterEach
    fun stop() = server.stop(0)

    private fun answer(exchange: HttpExchange) {
        val request = Json.parseToJsonElement(exchange.requestBody.readBytes().decodeToString()).jsonObject
        requests += request
        authorizations += exchange.requestHeaders.getFirst("Authorization").orEmpty()
        val prompt = request.getValue("messages").jsonArray.last().jsonObject.getValue("content").jsonPrimitive.content
        val number = Regex("draft (\\d+)").find(prompt)?.groupValues?.get(1)
        val stream = request["stream"]?.jsonPrimitive?.boolean == true
        if (stream) {
            exchange.responseHeaders.add("Content-Type", "text/event-stream")
            exchange.sendResponseHeaders(200, 0)
            exchange.responseBody.bufferedWriter().use { out ->
                for (token in listOf("Rayleigh ", "scattering, ", "draft $number.")) {
                    out.write("data: ${chunk(buildJsonObject { put("content", token) }, null)}\n\n")
                    out.flush()
                }
                out.write("data: ${chunk(buildJsonObject { }, "stop")}\n\ndata: [DONE]\n\n")
            }
        } else {
            val text =
                when {
                    prompt.startsWith("Plan") -> "search everything"
                    number!!.toInt() >= 2 -> "ACCEPT draft $number"
                    else -> "REVISE draft $number: cite a paper"
                }
            val body =
                buildJsonObject {
                    put("id", "c1")
                    put("object", "chat.completion")
                    put("created", 0)
                    put("model", "fake-model")
                    put(
                        "choices",
                        buildJsonArray {
                            add(
                                buildJsonObject {
                                    put("index", 0)
                                    putJsonObject("message") {
                                        put("role", "assistant")
                                        put("content", text)
                                    }
                                    put("finish_reason", "stop")
                                },
                            )
                        },
                    )
                }.toString().toByteArray()
            exchange.responseHeaders.add("Content-Type", "application/json")
            exchange.sendResponseHeaders(200, body.size.toLong())
            exchange.responseBody.use { it.write(body) }
        }
    }

    private fun chunk(delta: JsonObject, finish: String?): String =
        buildJsonObject {
            put("id", "c2")
            put("object", "chat.completion.chunk")
            put("created", 0)
            put("model", "fake-model")
            put(
                "choices",
                buildJsonArray {
                    add(
                        buildJsonObject {
                            put("index", 0)
                            put("delta", delta)
                            put("finish_reason", finish)
                        },
                    )
                },
            )
        }.toString()

    @Test
    fun `--model openai plans, streams the drafts and reviews through an OpenAI-compatible endpoint`(): Unit =
        runBlocking {
            val events = ArrayList<RunEvent>()
            val outcome = ResearchSample.run(SampleContext(models = ResearchModels.openAi(env::get))) { events += it }
            val result = outcome.result
            result.status shouldBe Status.COMPLETED
            result.state[Research.plan] shouldBe "search everything"
            result.state[Research.review] shouldBe "ACCEPT draft 2"
            result.state[Research.published] shouldBe
                "Report on 'Why is the sky blue?' (draft 2): Rayleigh scattering, draft 2."
            events.filterIsInstance<RunEvent.Custom>().map { it.payload }.filterIsInstance<AgentEvent.Token>()
                .map { it.text }.take(3) shouldBe listOf("Rayleigh ", "scattering, ", "draft 1.")
            requests.map { it.getValue("model").jsonPrimitive.content }.toSet() shouldBe setOf("fake-model")
            requests.size shouldBe 5 // plan, then write and review twice
            authorizations.toSet() shouldBe setOf("Bearer test-key")
            outcome.notes.last() shouldStartWith "models: openai (fake-model at http://127.0.0.1:"
        }

    @Test
    fun `--model openai without its environment variables fails naming them`() {
        val error =
            shouldThrow<UsageError> {
                SamplesCommand(env = mapOf(ResearchModels.MODEL to "gpt")::get).parse(arrayOf("--model", "openai"))
            }
        error.message shouldBe
            "--model openai needs the environment variables OPENAI_API_KEY and OPENAI_MODEL (and optionally " +
            "OPENAI_BASE_URL, default https://api.openai.com/v1); not set: OPENAI_API_KEY."
    }
}
