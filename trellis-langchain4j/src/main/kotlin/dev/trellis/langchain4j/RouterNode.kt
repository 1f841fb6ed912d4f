package dev.trellis.langchain4j

import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import kotlin.time.Duration

/**
 * Declares a router node [id]: [model] picks which of [routes] (target node → what it handles) runs next. The node
 * sends the messages [messages] builds, after a system message listing the routes, writes the chosen node's id to
 * [choice], and takes a route edge to that node (the edges are declared here: do not add others from [id]).
 *
 * The answer names a route by its node id (case, quotes and a final period ignored; or an answer that contains
 * exactly one route id). Any other answer fails the attempt with an [IllegalStateException] naming the answer and
 * the routes; with a [retry] policy the model is asked again. The response's tokens are charged to [meters].
 *
 * ```kotlin
 * val triage = routerNode("triage", model, Support.route, mapOf(billing to "invoices, refunds", tech to "bugs")) {
 *     listOf(UserMessage.from(it[Support.ticket]))
 * }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.routerNode(
    id: String,
    model: ChatModel,
    choice: StateKey<String>,
    routes: Map<NodeRef, String>,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    messages: (State) -> List<ChatMessage>,
): NodeRef {
    require(routes.isNotEmpty()) { "Router node '$id' has no routes; give it at least one target node." }
    val ids = routes.keys.map { it.id }
    val instructions =
        "Choose who handles this. Answer with exactly one of these names and nothing else:\n" +
            routes.entries.joinToString("\n") { (node, what) -> "- ${node.id}: $what" }
    val router =
        node(id, timeout, retry, description ?: "router to $ids") {
            val request = ChatRequest.builder().messages(listOf(SystemMessage.from(instructions)) + messages(state))
            val answer = chatMetered(model, request.build(), meters).aiMessage().text().orEmpty()
            set(choice, pickRoute(answer, ids, nodeId))
        }
    router.route(*routes.keys.toTypedArray()) { state -> routes.keys.first { it.id == state[choice] } }
    return router
}

internal fun pickRoute(answer: String, ids: List<String>, nodeId: String): String {
    val cleaned = answer.trim().trim('"', '\'', '`', '*').removeSuffix(".").trim()
    ids.firstOrNull { it.equals(cleaned, ignoreCase = true) }?.let { return it }
    val mentioned = ids.filter { Regex("\\b${Regex.escape(it)}\\b", RegexOption.IGNORE_CASE).containsMatchIn(answer) }
    return mentioned.singleOrNull()
        ?: throw IllegalStateException(
            "Router node '$nodeId' got the answer '${answer.take(200)}', which names ${
                if (mentioned.isEmpty()) "none" else "several ($mentioned)"
            } of its routes $ids; give the node a retry policy, or make the prompt ask for one name only.",
        )
}
