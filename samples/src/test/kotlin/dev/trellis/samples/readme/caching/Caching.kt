package dev.trellis.samples.readme.caching

import dev.trellis.checkpoint.InMemoryNodeCache
import dev.trellis.graph.CachePolicy
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.hours

object Weather : StateSchema() {
    val city = key<String>("city")
    val forecast = key("forecast", default = "")
}

val fetches = AtomicInteger()

val weather = graph("weather", Weather) {
    // A hit skips the body and applies the writes it stored; an entry expires an hour after it was stored.
    val fetch = node("fetch", cache = CachePolicy(key = { input -> input[Weather.city] }, ttl = 1.hours)) {
        fetches.incrementAndGet()
        set(Weather.forecast, "sunny in ${get(Weather.city)}")
    }
    start(fetch)
}

fun main() = runBlocking {
    // In memory here; SqliteNodeCache and PostgresNodeCache keep entries next to the checkpoints.
    val options = RunOptions(cache = InMemoryNodeCache())
    repeat(2) { println(weather.invoke(stateOf(Weather.city to "Oslo"), options).state[Weather.forecast]) }
    println("fetched ${fetches.get()} time(s)") // fetched 1 time(s)
}
