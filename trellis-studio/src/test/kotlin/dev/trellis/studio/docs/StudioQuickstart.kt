package dev.trellis.studio.docs

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import dev.trellis.studio.TrellisStudio
import kotlinx.coroutines.runBlocking
import java.nio.file.Files

object Greeting : StateSchema("greeting") {
    val person = key("person", default = "")
    val text = key("text", default = "")
}

val greet = graph("greet", Greeting) {
    val hello = node("hello") { set(Greeting.text, "Hello, ${get(Greeting.person)}!") }
    start(hello)
}

fun main() {
    val store = SqliteCheckpointStore(Files.createTempFile("runs", ".db"))
    runBlocking {
        greet.invoke(stateOf(Greeting.person to "Ada"), RunOptions(checkpointing = Checkpointing(store)))
    }
    // One line: the studio over the store, on a free port of 127.0.0.1, allowed to run `greet`.
    val studio = TrellisStudio.start(store, port = 0, graphs = listOf(greet))
    println("Trellis Studio at ${studio.url}")
    studio.close() // a real application keeps it open while it wants the pages
    store.close()
}
