package dev.trellis.samples.readme.policies

import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import java.util.concurrent.atomic.AtomicLong

object Chat : StateSchema() {
    val prompt = key<String>("prompt")
    val reply = key("reply", default = "")
}

val chat = graph("chat", Chat) {
    val answer = node("answer") { set(Chat.reply, "Call me at 555-0100 about: ${get(Chat.prompt)}") }
    // Per node: what the node wrote is redacted before it is merged.
    answer.intercept(
        NodeInterceptor { chain ->
            chain.proceed().map(Chat.reply) { it.replace(Regex("\\d{3}-\\d{4}"), "***") }
        },
    )
    start(answer)
}

fun main() = runBlocking {
    val characters = AtomicLong()
    // Per run: a meter around every node (run-level interceptors wrap the graph's and the nodes' own).
    val meter = NodeInterceptor { chain ->
        chain.proceed().also { writes -> writes[Chat.reply]?.let { characters.addAndGet(it.length.toLong()) } }
    }
    val result = chat.invoke(stateOf(Chat.prompt to "the invoice"), RunOptions(interceptors = listOf(meter)))
    println(result.state[Chat.reply]) // Call me at *** about: the invoice
    println("metered ${characters.get()} characters") // metered 33 characters
}
