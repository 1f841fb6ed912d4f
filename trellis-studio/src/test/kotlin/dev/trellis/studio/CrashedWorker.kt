package dev.trellis.studio

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import java.nio.file.Path
import java.time.Duration

/**
 * A worker that dies mid-run, in a JVM of its own: it runs [TestGraphs.crashy] as run `args[1]` into the SQLite file
 * `args[0]`, with leases of [LEASE], as owner [OWNER]; the test kills it while `hang` hangs.
 */
object CrashedWorker {
    const val OWNER = "crashed-worker"
    val LEASE: Duration = Duration.ofSeconds(10)

    @JvmStatic
    fun main(args: Array<String>) {
        val store = SqliteCheckpointStore(Path.of(args[0]), leaseDuration = LEASE)
        runBlocking {
            TestGraphs.crashy(hang = true).invoke(
                options = RunOptions(runId = args[1], checkpointing = Checkpointing(store, owner = OWNER)),
            )
        }
    }
}
