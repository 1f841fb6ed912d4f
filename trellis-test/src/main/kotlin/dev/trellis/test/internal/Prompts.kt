package dev.trellis.test.internal

import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.TextContent
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.request.ChatRequest

/** The prompt of [request] as a person names it: the text of its last user message (else of its last message). */
internal fun promptOf(request: ChatRequest): String {
    val messages = request.messages()
    val user = messages.lastOrNull { it is UserMessage } ?: messages.lastOrNull() ?: return ""
    return textOf(user)
}

/** The text of [message], whatever its kind (tool calls as `name(arguments)`). */
internal fun textOf(message: ChatMessage): String = when (message) {
    is UserMessage ->
        if (message.hasSingleText()) {
            message.singleText()
        } else {
            message.contents().joinToString("") { (it as? TextContent)?.text() ?: "<${it.type()}>" }
        }
    is SystemMessage -> message.text()
    is AiMessage ->
        listOfNotNull(
            message.text(),
            message.toolExecutionRequests().takeIf { it.isNotEmpty() }
                ?.joinToString(", ") { "${it.name()}(${it.arguments()})" },
        ).joinToString(" ")
    is ToolExecutionResultMessage -> "${message.toolName()} -> ${message.text()}"
    else -> message.toString()
}

/** A short form of [text] for error messages: at most [max] characters, on one line. */
internal fun shorten(text: String, max: Int = 200): String {
    val line = text.replace("\n", "\\n")
    return if (line.length <= max) line else line.take(max - 1) + "…"
}
