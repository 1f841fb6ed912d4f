package dev.trellis.langchain4j

import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.ImageContent
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.TextContent
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.Json
import org.junit.jupiter.api.Test

class MessageTest {
    private val conversation =
        listOf(
            Message.System("Be brief."),
            Message.User("Weather in Paris?"),
            Message.Ai(null, listOf(ToolCall("c1", "temperature", """{"city":"Paris"}"""))),
            Message.ToolResult("c1", "temperature", "21 C"),
            Message.Ai("21 C."),
        )

    @Test
    fun `a conversation goes through JSON and back unchanged, each message tagged by its kind`() {
        val json = Json.encodeToString(ListSerializer(Message.serializer()), conversation)
        json shouldContain """{"type":"tool","id":"c1","toolName":"temperature","text":"21 C"}"""
        Json.decodeFromString(ListSerializer(Message.serializer()), json) shouldBe conversation
    }

    @Test
    fun `a conversation saved in the earlier format decodes, and encodes to the same text`() {
        val saved = """[{"type":"system","text":"Be brief."},{"type":"user","text":"Weather in Paris?"},""" +
            """{"type":"ai","toolCalls":[{"id":"c1","name":"temperature","arguments":"{\"city\":\"Paris\"}"}]},""" +
            """{"type":"tool","id":"c1","toolName":"temperature","text":"21 C"},{"type":"ai","text":"21 C."}]"""
        Json.decodeFromString(ListSerializer(Message.serializer()), saved) shouldBe conversation
        Json.encodeToString(ListSerializer(Message.serializer()), conversation) shouldBe saved
        Json.decodeFromString(ToolCall.serializer(), """{"id":"c1","name":"t","arguments":"{}"}""") shouldBe
            ToolCall("c1", "t", "{}")
    }

    @Test
    fun `messages are values, printed as before`() {
        Message.Ai("x") shouldBe Message.Ai("x", emptyList())
        Message.Ai("x").hashCode() shouldBe Message.Ai("x", emptyList()).hashCode()
        (Message.User("x") == Message.System("x")) shouldBe false
        conversation[2].toString() shouldBe
            "Ai(text=null, toolCalls=[ToolCall(id=c1, name=temperature, arguments={\"city\":\"Paris\"})])"
        conversation[3].toString() shouldBe "ToolResult(id=c1, toolName=temperature, text=21 C)"
    }

    @Test
    fun `messages convert to LangChain4j messages and back`() {
        val lc4j = Message.toChatMessages(conversation)
        lc4j[0] shouldBe SystemMessage.from("Be brief.")
        lc4j[1] shouldBe UserMessage.from("Weather in Paris?")
        (lc4j[2] as AiMessage).toolExecutionRequests().single().arguments() shouldBe """{"city":"Paris"}"""
        lc4j[3] shouldBe ToolExecutionResultMessage.from("c1", "temperature", "21 C")
        lc4j.map { Message.of(it) } shouldBe conversation
    }

    @Test
    fun `a user message with an image cannot be kept in the state, and the error says what to do`() {
        val image = UserMessage.from(TextContent.from("look"), ImageContent.from("https://example.com/a.png"))
        shouldThrow<IllegalArgumentException> { Message.of(image) }.message!! shouldContain
            "keep images and files outside the state and put a reference to them in the text"
    }
}
