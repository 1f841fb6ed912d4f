package dev.trellis.samples.readme.durable

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import kotlinx.coroutines.runBlocking
import java.nio.file.Path
import java.util.UUID

object Order : StateSchema() {
    val item = key<String>("item")
    val shipped = key("shipped", default = false)
}

val shipping = graph("shipping", Order) {
    val approve = node("approve") {
        val answer = interrupt("Ship ${get(Order.item)}?") // the first time, the run ends INTERRUPTED here
        set(Order.shipped, answer == "yes")
    }
    start(approve)
}

fun main() = runBlocking {
    val runId = "order-${UUID.randomUUID()}" // your own id, e.g. the order's; one run per id
    SqliteCheckpointStore(Path.of("runs.db")).use { store -> // or PostgresCheckpointStore(dataSource)
        val options = RunOptions(runId = runId, checkpointing = Checkpointing(store))
        val paused = shipping.invoke(stateOf(Order.item to "42 books"), options)
        println("${paused.status}: ${paused.interrupts.single().payload}") // INTERRUPTED: Ship 42 books?
        val done = shipping.resume(runId, options, answer = "yes") // also after a crash, in another process
        println("${done.status}: shipped = ${done.state[Order.shipped]}") // COMPLETED: shipped = true
        store.delete(runId) // once its checkpoints are no longer needed
    }
}
