package dev.trellis.test.guide

import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import dev.trellis.test.replay.Cassette
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.nio.file.Path

class ReplayGuideTest {
    /** Your real model (an OpenAiChatModel with a key, say); this guide scripts one so that it runs anywhere. */
    private fun realModel() = ScriptedChatModel.builder()
        .whenPrompt("Classify", ScriptedAnswer.text("tech"))
        .whenPrompt("Reply", ScriptedAnswer.text("Please restart the router."))
        .build()

    @Test
    fun `the triage graph replays its recorded model calls`() = runTest {
        // TRELLIS_CASSETTE=record (or -Dtrellis.cassette=record) calls the real model and rewrites the file;
        // by default the file is replayed, and a changed prompt fails naming the request and showing the diff.
        Cassette.open(Path.of("src/test/resources/cassettes/triage.json")).use { cassette ->
            val model = cassette.chatModel(if (cassette.isRecording) realModel() else null)
            val result = triageGraph(model).invoke(stateOf(Triage.ticket to "My internet is down"))
            result.state[Triage.reply] shouldBe "Please restart the router."
        }
    }
}
