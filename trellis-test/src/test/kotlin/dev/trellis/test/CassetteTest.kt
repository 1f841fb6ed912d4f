package dev.trellis.test

import dev.langchain4j.data.message.UserMessage
import dev.trellis.graph.graph
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.reactAgent
import dev.trellis.langchain4j.streamingChatNode
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.invoke
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import dev.trellis.test.replay.Cassette
import dev.trellis.test.replay.CassetteMismatchException
import dev.trellis.test.replay.CassetteMode
import dev.trellis.test.replay.Redaction
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path

class CassetteTest {
    @TempDir
    lateinit var dir: Path

    private fun realModel() = ScriptedChatModel.builder()
        .whenPrompt("sky") { ScriptedAnswer.text("Rayleigh scattering makes the sky blue.") }
        .whenPrompt("sea") { ScriptedAnswer.text("The sea reflects the sky.") }
        .build()

    @Test
    fun `a replay fails on a changed prompt, naming the divergent request, and passes after re-recording`() = runTest {
        val file = dir.resolve("qa.json")
        val real = realModel()
        Cassette.open(file, CassetteMode.RECORD).use { cassette ->
            qaGraph(cassette.chatModel(real)).invoke(question("Why is the sky blue?")).state[Qa.words] shouldBe 6
        }
        real.requests.size shouldBe 1

        // Replay: no real model, same answer.
        Cassette.open(file, CassetteMode.REPLAY).use { cassette ->
            qaGraph(cassette.chatModel(null)).invoke(question("Why is the sky blue?")).state[Qa.answer] shouldBe
                "Rayleigh scattering makes the sky blue."
        }

        // The graph's prompt changed: the replay fails, naming the request and showing the diff.
        val changed = Cassette.open(file, CassetteMode.REPLAY, strict = false)
        val error = shouldThrow<GraphRunException> {
            qaGraph(changed.chatModel(null), system = "Answer in one word.").invoke(question("Why is the sky blue?"))
        }.cause as CassetteMismatchException
        error.message shouldContain "A chat model request is not in cassette $file"
        error.message shouldContain "  - system: Answer briefly."
        error.message shouldContain "  + system: Answer in one word."
        error.message shouldContain "    user: Question: Why is the sky blue?"
        error.message shouldContain "TRELLIS_CASSETTE=record"

        // Re-recorded with the new prompt, the replay passes.
        Cassette.open(file, CassetteMode.RECORD).use { cassette ->
            qaGraph(cassette.chatModel(real), system = "Answer in one word.").invoke(question("Why is the sky blue?"))
        }
        Cassette.open(file, CassetteMode.REPLAY).use { cassette ->
            qaGraph(cassette.chatModel(null), system = "Answer in one word.").invoke(question("Why is the sky blue?"))
                .state[Qa.words] shouldBe 6
        }
    }

    @Test
    fun `the cassette is pretty JSON with secrets redacted`() = runTest {
        val file = dir.resolve("secret.json")
        val real = ScriptedChatModel.builder().answer("Use header Authorization: Bearer abcdefghijklmnop1234").build()
        Cassette.open(file, CassetteMode.RECORD, Redaction.DEFAULT.value("hunter2-secret")).use { cassette ->
            qaGraph(
                cassette.chatModel(real),
            ).invoke(question("my key is sk-abcdefghijklmnopqrstuvwx and hunter2-secret"))
        }
        val text = Files.readString(file)
        text shouldContain "\n  \"interactions\": [\n"
        text shouldNotContain "sk-abcdefghijklmnopqrstuvwx"
        text shouldNotContain "hunter2-secret"
        text shouldNotContain "abcdefghijklmnop1234"
        text shouldContain "my key is <redacted> and <redacted>"
        // Replay redacts the live request the same way before matching.
        Cassette.open(file, CassetteMode.REPLAY, Redaction.DEFAULT.value("hunter2-secret")).use { cassette ->
            qaGraph(
                cassette.chatModel(null),
            ).invoke(question("my key is sk-abcdefghijklmnopqrstuvwx and hunter2-secret"))
                .state[Qa.answer] shouldBe "Use header Authorization: Bearer <redacted>"
        }
    }

    @Test
    fun `tools and an agent's model calls are recorded and replayed without the real ones`() = runTest {
        val file = dir.resolve("agent.json")
        val weather = Weather()
        val model = ScriptedChatModel.builder().answer(
            ScriptedAnswer.toolCalls(
                ScriptedAnswer.call("temperature", """{"city":"Oslo"}"""),
                ScriptedAnswer.call("temperature", """{"city":"Rome"}"""),
            ),
            ScriptedAnswer.text("Oslo -3, Rome 21."),
        ).build()
        Cassette.open(file, CassetteMode.RECORD).use { cassette ->
            reactAgent(cassette.chatModel(model), cassette.tools(Tools.from(weather))).invoke(agentInput("Weather?"))
        }
        weather.calls.get() shouldBe 2
        Files.readString(file) shouldContain "\"tool\": \"temperature\""

        val offline = Weather()
        Cassette.open(file, CassetteMode.REPLAY).use { cassette ->
            reactAgent(cassette.chatModel(null), cassette.tools(Tools.from(offline))).invoke(agentInput("Weather?"))
                .state[AgentState.answer] shouldBe "Oslo -3, Rome 21."
        }
        offline.calls.get() shouldBe 0
    }

    @Test
    fun `a streaming model's tokens are recorded and replayed`() = runTest {
        val file = dir.resolve("stream.json")
        val real = ScriptedChatModel.builder().answer(ScriptedAnswer.tokens("a ", "b ", "c")).buildStreaming()
        val graph = { model: dev.langchain4j.model.chat.StreamingChatModel ->
            graph("s", Qa) { start(streamingChatNode("write", model, Qa.answer) { listOf(UserMessage.from("go")) }) }
        }
        Cassette.open(file, CassetteMode.RECORD).use { graph(it.streamingChatModel(real)).invoke(question("")) }
        Files.readString(file) shouldContain "\"tokens\": ["
        Cassette.open(file, CassetteMode.REPLAY).use {
            graph(it.streamingChatModel(null)).invoke(question("")).state[Qa.answer] shouldBe "a b c"
        }
    }

    @Test
    fun `a replay with calls left over fails on close, and a missing cassette says how to record it`() = runTest {
        val file = dir.resolve("two.json")
        Cassette.open(file, CassetteMode.RECORD).use { cassette ->
            val model = cassette.chatModel(realModel())
            qaGraph(model).invoke(question("sky?"))
            qaGraph(model).invoke(question("sea?"))
        }
        val cassette = Cassette.open(file, CassetteMode.REPLAY)
        qaGraph(cassette.chatModel(null)).invoke(question("sea?")) // any order
        cassette.remaining shouldBe 1
        shouldThrow<CassetteMismatchException> { cassette.close() }.message shouldContain "user: Question: sky?"

        shouldThrow<IllegalStateException> { Cassette.open(dir.resolve("none.json"), CassetteMode.REPLAY) }
            .message shouldContain "TRELLIS_CASSETTE=record"
        Cassette.open(dir.resolve("auto.json"), CassetteMode.AUTO).mode shouldBe CassetteMode.RECORD
        Cassette.open(file, CassetteMode.AUTO, strict = false).mode shouldBe CassetteMode.REPLAY
    }

    @Test
    fun `the mode is read from the system property, then the environment`() {
        CassetteMode.parse("Record") shouldBe CassetteMode.RECORD
        CassetteMode.parse(null) shouldBe CassetteMode.AUTO
        shouldThrow<IllegalArgumentException> { CassetteMode.parse("rewind") }.message shouldContain
            "not one of record, replay, auto"
        System.setProperty(CassetteMode.PROPERTY, "replay")
        try {
            CassetteMode.fromEnvironment() shouldBe CassetteMode.REPLAY
        } finally {
            System.clearProperty(CassetteMode.PROPERTY)
        }
    }
}
