package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.testing.ChildJvm
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * A process running a graph under `RunControl.drainOnShutdown()` gets SIGTERM in the middle of the run: it saves a
 * DRAINED checkpoint and releases the run's lease before the JVM exits, so the next process resumes it at once
 * instead of waiting for the lease to expire (30 s).
 */
class DrainOnShutdownTest {
    @TempDir
    lateinit var dir: Path

    private fun child(vararg args: String, out: File): Process = ChildJvm.start(
        DrainChild::class.java,
        args.toList(),
        out,
    )

    private fun output(file: File) = ChildJvm.output(file)

    private fun done(side: Path): Int = if (Files.exists(side)) {
        Files.readAllLines(side).count {
            it.startsWith("done ")
        }
    } else {
        0
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    fun `SIGTERM drains the run and releases its lease before the JVM exits`(): Unit = runBlocking {
        val reference = CrashGraph.build(stepMillis = 0) {}.invoke()
        // The lease used to be released after the shutdown hook returned, a race the JVM's exit won most of the time.
        repeat(3) { trial ->
            val db = dir.resolve("drain-$trial.db")
            val side = dir.resolve("side-$trial.log")
            val out = dir.resolve("child-$trial.out").toFile()
            val runId = "drain-run-$trial"
            val process = child(db.toString(), side.toString(), runId, out = out)
            try {
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40)
                while (done(side) < 3) {
                    check(
                        process.isAlive,
                    ) { "The child ended before SIGTERM (exit ${process.exitValue()}): ${output(out)}" }
                    check(
                        System.nanoTime() < deadline,
                    ) { "The child did not finish 3 nodes within 40 s: ${output(out)}" }
                    Thread.sleep(10) // polling a file of another process
                }
                process.destroy() // SIGTERM on Linux: the shutdown hook drains
                withClue("the child must exit after draining: ${output(out)}") {
                    process.waitFor(30, TimeUnit.SECONDS) shouldBe
                        true
                }
            } finally {
                process.destroyForcibly()
            }
            withClue("trial $trial: exited on SIGTERM: ${output(out)}") { process.exitValue() shouldBe 143 }

            val graph = CrashGraph.build(stepMillis = 0) {}
            SqliteCheckpointStore(db).use { store ->
                withClue("trial $trial: the last checkpoint") { store.latest(runId)!!.status shouldBe "DRAINED" }
                val resumed = try {
                    graph.resume(runId, RunOptions(checkpointing = Checkpointing(store, owner = "next-process")))
                } catch (e: RunOwnedException) {
                    throw AssertionError(
                        "trial $trial: the drained process kept the lease of run $runId: ${output(out)}",
                        e,
                    )
                }
                resumed.status shouldBe Status.COMPLETED
                resumed.state shouldBe reference.state
            }
        }
    }
}
