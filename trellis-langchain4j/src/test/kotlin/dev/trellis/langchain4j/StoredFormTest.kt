package dev.trellis.langchain4j

import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import org.junit.jupiter.api.Test

/** Checkpoints written before must still load: the form of a conversation in the state, byte for byte. */
class StoredFormTest {
    private val conversation =
        listOf(
            Message.System("Be brief."),
            Message.User("Weather in Paris?"),
            Message.Ai("Let me look.", listOf(ToolCall("c1", "temperature", """{"city":"Paris"}"""))),
            Message.ToolResult("c1", "temperature", "21 C"),
            Message.Ai(null, listOf(ToolCall("c2", "wind", "{}"))),
            Message.Ai("21 C."),
        )

    // Written by the state key of this module's agent conversation before its messages shared their form.
    private val saved =
        """[{"type":"system","text":"Be brief."},{"type":"user","text":"Weather in Paris?"},""" +
            """{"type":"ai","text":"Let me look.","toolCalls":[{"id":"c1","name":"temperature",""" +
            """"arguments":"{\"city\":\"Paris\"}"}]},{"type":"tool","id":"c1","toolName":"temperature",""" +
            """"text":"21 C"},{"type":"ai","toolCalls":[{"id":"c2","name":"wind","arguments":"{}"}]},""" +
            """{"type":"ai","text":"21 C."}]"""

    @Test
    fun `a conversation saved by an earlier version decodes, and encodes to the same bytes`() {
        val key = AgentState.messages
        Json.decodeFromString(key.serializer, saved) shouldBe conversation
        Json.encodeToString(key.serializer, conversation) shouldBe saved
    }

    @Test
    fun `the message type keeps its name in the state key's errors`() {
        Message.serializer().descriptor.serialName shouldBe "dev.trellis.langchain4j.Message"
        ToolCall.serializer().descriptor.serialName shouldBe "dev.trellis.langchain4j.ToolCall"
    }
}
