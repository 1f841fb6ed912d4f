package dev.trellis.samples.readme.fallback

import dev.trellis.graph.NodeError
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import java.io.IOException
import kotlin.time.Duration.Companion.milliseconds

object Search : StateSchema() {
    val query = key<String>("query")
    val answer = key("answer", default = "")
    val failure = key<NodeError?>("failure", default = null)
}

val search = graph("search", Search) {
    val web = node("web", retry = Retry.fixed(maxAttempts = 3, delay = 10.milliseconds)) {
        throw IOException("search API is down")
    }
    val cached = node("cached") {
        val failure = get(Search.failure)!! // the failed node, the error's type and message, the attempts
        set(Search.answer, "cached answer (${failure.node} failed ${failure.attempts} times: ${failure.message})")
    }
    start(web)
    web.onFailure(cached, error = Search.failure) // after the retries, instead of failing the run
}

fun main() = runBlocking {
    val result = search.invoke(stateOf(Search.query to "sky"))
    println("${result.status}: ${result.state[Search.answer]}")
}
