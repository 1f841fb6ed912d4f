package dev.trellis.functional.crash

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.functional.Workflow
import dev.trellis.functional.WorkflowNondeterminismException
import dev.trellis.functional.WorkflowSettings
import dev.trellis.functional.task
import dev.trellis.functional.taskAsync
import dev.trellis.functional.workflow
import dev.trellis.testing.TestPostgres
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import java.time.Duration
import java.time.Instant
import kotlin.system.exitProcess

/** The workflow of the crash tests: rounds of two parallel tasks and a serial one, each a side effect in a file. */
object CrashWorkflow {
    const val RUN_ID = "functional-crash-run"
    const val ROUNDS = 8

    /** A short lease, so that the run of a killed process can be taken over soon. */
    val LEASE: Duration = Duration.ofSeconds(2)

    /** Every task's name, in call order. */
    val taskNames: List<String> = (1..ROUNDS).flatMap { listOf("p$it-1", "p$it-2", "s$it") }

    /** The workflow; each task logs `start <name>`, waits [stepMillis], and logs `done <name>` (its side effect). */
    fun build(stepMillis: Long, log: (String) -> Unit): Workflow<Int, Int> = workflow("crash-flow") { seed ->
        var total = seed
        for (i in 1..ROUNDS) {
            val parallel = (1..2).map { j ->
                taskAsync("p$i-$j") { effect("p$i-$j", stepMillis, log).let { i * 10 + j } }
            }
            val before = total
            val serial = task("s$i") { effect("s$i", stepMillis, log).let { before + i } }
            total = serial + parallel.awaitAll().sum()
        }
        total
    }

    /** The same workflow after a code change: an audit task comes first. */
    fun changed(log: (String) -> Unit): Workflow<Int, Int> = workflow("crash-flow") { seed ->
        task("audit") { effect("audit", 1, log).let { seed } }
    }

    private suspend fun effect(name: String, stepMillis: Long, log: (String) -> Unit) {
        log("start $name")
        delay(stepMillis)
        log("done $name")
    }

    /** A store on [backend] (`sqlite` or `postgres`) at [location] (a file, or a schema of the test database). */
    fun store(backend: String, location: String): CheckpointStore = when (backend) {
        "sqlite" -> SqliteCheckpointStore(Path.of(location), leaseDuration = LEASE)
        "postgres" -> PostgresCheckpointStore(TestPostgres.dataSource, location, leaseDuration = LEASE)
        else -> error("unknown backend $backend")
    }
}

/** Appends lines to a file durably: each line is forced to disk before the task goes on. */
class SideLog(path: Path) : AutoCloseable {
    private val channel =
        FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)
    private val pid = ProcessHandle.current().pid()

    @Synchronized
    fun log(line: String) {
        channel.write(ByteBuffer.wrap("$line $pid\n".toByteArray()))
        channel.force(false)
    }

    override fun close() = channel.close()
}

/**
 * The child process of [WorkflowCrashTest]: `<mode> <backend> <location> <sideLog> <resultFile>`, mode `run` (starts
 * the run, and is killed during it), `resume` (resumes it; may be killed too) or `changed` (resumes it with changed
 * code and reports what it was told). Each process has a lease owner of its own, so a resume waits for the killed
 * process's lease to expire.
 */
object CrashChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (mode, backend, location, side, result) = args
        val settings = WorkflowSettings.DEFAULT.withOwner("crash-${ProcessHandle.current().pid()}")
        val runId = CrashWorkflow.RUN_ID
        SideLog(Path.of(side)).use { sideLog ->
            CrashWorkflow.store(backend, location).use { store ->
                val flow = CrashWorkflow.build(120, sideLog::log)
                val text = runBlocking {
                    when (mode) {
                        "run" -> "output " + flow.run(1, store, runId, settings)
                        "resume" -> "output " + whenFree { flow.resume(runId, store, settings = settings) }
                        "changed" -> try {
                            whenFree { CrashWorkflow.changed(sideLog::log).resume(runId, store, settings = settings) }
                            "no error"
                        } catch (e: WorkflowNondeterminismException) {
                            "nondeterminism ${e.position} ${e.message}"
                        }
                        else -> error("unknown mode $mode")
                    }
                }
                Files.writeString(Path.of(result), text)
            }
        }
        exitProcess(0)
    }

    /** Runs [block], waiting for the killed process's lease to expire first (it can no longer release it). */
    private suspend fun <T> whenFree(block: suspend () -> T): T {
        val deadline = Instant.now().plusSeconds(30)
        while (true) {
            try {
                return block()
            } catch (e: RunOwnedException) {
                if (Instant.now().isAfter(deadline)) throw e
                delay(maxOf(50, Duration.between(Instant.now(), e.leaseExpiresAt).toMillis() + 50))
            }
        }
    }
}
