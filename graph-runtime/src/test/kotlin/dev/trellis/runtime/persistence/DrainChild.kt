package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import java.nio.file.Path
import kotlin.system.exitProcess

/**
 * The child process of [DrainOnShutdownTest]: `<db> <sideLog> <runId>` runs [CrashGraph] with a SQLite store (the
 * default 30-s lease) under a control that drains on shutdown; the test stops it with SIGTERM.
 */
object DrainChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (db, side, runId) = args
        val control = RunControl()
        control.drainOnShutdown()
        SideLog(Path.of(side)).use { sideLog ->
            val graph = CrashGraph.build(stepMillis = 150, log = sideLog::log)
            SqliteCheckpointStore(Path.of(db)).use { store ->
                val options = RunOptions(runId = runId, control = control, checkpointing = Checkpointing(store))
                val result = runBlocking { graph.invoke(options = options) }
                println("run ended ${result.status}")
            }
        }
        exitProcess(0)
    }
}
