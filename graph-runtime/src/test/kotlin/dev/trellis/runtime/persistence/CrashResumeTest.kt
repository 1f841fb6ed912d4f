package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.stateAt
import dev.trellis.testing.ChildJvm
import io.kotest.assertions.withClue
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
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
 * A process running a graph with a SQLite store is killed with SIGKILL in the middle of the run; a second process
 * resumes it. Completed (checkpointed) nodes never run again, nodes that were running run again, and the final
 * state is the state of an uninterrupted run.
 */
class CrashResumeTest {
    @TempDir
    lateinit var dir: Path

    private fun child(vararg args: String, out: File): Process = ChildJvm.start(
        CrashChild::class.java,
        args.toList(),
        out,
    )

    private fun output(file: File) = ChildJvm.output(file)

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    fun `a run killed with SIGKILL resumes in another process without re-running completed nodes`(): Unit = runBlocking {
        val started = System.nanoTime()
        val db = dir.resolve("runs.db")
        val side = dir.resolve("side.log")
        val result = dir.resolve("result.txt")
        val firstOut = dir.resolve("first.out").toFile()
        val secondOut = dir.resolve("second.out").toFile()

        // 1. Start the run in a child JVM and kill it once several nodes are done.
        val first = child("run", db.toString(), side.toString(), out = firstOut)
        try {
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40)
            while (SideLog.read(side).count { it.event == "done" } < 6) {
                check(first.isAlive) {
                    "The first child ended before it could be killed (exit ${first.exitValue()}): ${output(firstOut)}"
                }
                check(
                    System.nanoTime() < deadline,
                ) { "The first child did not finish 6 nodes within 40 s: ${output(firstOut)}" }
                Thread.sleep(10) // polling a file of another process
            }
        } finally {
            first.destroyForcibly() // SIGKILL on Linux: no shutdown hook, no lease release
            withClue("the first child must die") { first.waitFor(15, TimeUnit.SECONDS) shouldBe true }
        }
        withClue("killed, not exited normally: ${output(firstOut)}") { first.exitValue() shouldBe 137 }
        val firstPid = first.pid()
        val beforeKill = SideLog.read(side)

        // What the store holds from the killed process: the nodes whose completion was checkpointed.
        val graph = CrashGraph.build(stepMillis = 1) {}
        val checkpointed = SqliteCheckpointStore(db).use { store ->
            val history = store.history(CrashGraph.RUN_ID)
            history.last().status shouldBe "RUNNING"
            graph.stateAt(store, CrashGraph.RUN_ID)[CrashGraph.Work.visited].toSet()
        }
        val startedBeforeKill = beforeKill.filter { it.event == "start" }.map { it.node }.toSet()
        val runningAtKill = startedBeforeKill - checkpointed
        println("CrashResumeTest: checkpointed before the kill $checkpointed; running at the kill $runningAtKill")
        checkpointed.size shouldBeGreaterThan 0
        withClue("some nodes were running at the kill") { runningAtKill.size shouldBeGreaterThan 0 }
        withClue("the crash came before the end") { (checkpointed.size < CrashGraph.nodeIds.size) shouldBe true }

        // 2. Resume in a second child JVM (it waits for the dead process's lease to expire).
        val second = child("resume", db.toString(), side.toString(), result.toString(), out = secondOut)
        try {
            withClue("the second child must finish within 40 s: ${output(secondOut)}") {
                second.waitFor(40, TimeUnit.SECONDS) shouldBe
                    true
            }
        } finally {
            second.destroyForcibly()
        }
        withClue("the second child failed: ${output(secondOut)}") { second.exitValue() shouldBe 0 }
        val secondPid = second.pid()
        val all = SideLog.read(side)

        // 3. The reference: the same graph run in-process, uninterrupted, without a store.
        val reference = graph.invoke()
        reference.status shouldBe Status.COMPLETED

        // lines "status X", "executions <node> N", "visited a,b,c", "total N"
        val resumed = Files.readAllLines(result).filter { it.isNotBlank() }.associate {
            it.substringBeforeLast(' ') to
                it.substringAfterLast(' ')
        }
        resumed["status"] shouldBe "COMPLETED"
        for (id in CrashGraph.nodeIds) {
            withClue("executions of $id in the resumed result") {
                resumed["executions $id"] shouldBe
                    reference.node(id).executions.toString()
            }
        }
        resumed["visited"] shouldBe reference.state[CrashGraph.Work.visited].joinToString(",")
        resumed["total"] shouldBe reference.state[CrashGraph.Work.executions].toString()

        SqliteCheckpointStore(db).use { store ->
            graph.stateAt(store, CrashGraph.RUN_ID) shouldBe reference.state
            val history = graph.checkpoints(store, CrashGraph.RUN_ID)
            history.last().status shouldBe "COMPLETED"
            history.map { it.sequence } shouldBe (1L..history.size).toList()
            val kinds = store.history(CrashGraph.RUN_ID).map { it.kind }.toSet()
            kinds shouldBe setOf(CheckpointRecord.Kind.FULL, CheckpointRecord.Kind.DELTA)
        }

        for (id in CrashGraph.nodeIds) {
            val done = all.count { it.event == "done" && it.node == id }
            val doneAfter = all.count { it.event == "done" && it.node == id && it.pid == secondPid }
            val startsAfter = all.count { it.event == "start" && it.node == id && it.pid == secondPid }
            withClue("node $id: done lines ${all.filter { it.node == id }}") {
                done shouldBeLessThanOrEqual 1 + (if (id in runningAtKill) 1 else 0)
                if (id in checkpointed) {
                    startsAfter shouldBe 0 // completed and checkpointed: never runs again
                } else {
                    doneAfter shouldBe 1 // not checkpointed: runs (again) in the second process
                }
            }
        }
        all.map { it.pid }.toSet() shouldBe setOf(firstPid, secondPid)
        val seconds = (System.nanoTime() - started) / 1e9
        println("CrashResumeTest: whole test %.1f s".format(seconds))
    }
}
