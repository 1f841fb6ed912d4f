package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.stateAt
import dev.trellis.testing.ChildJvm
import io.kotest.assertions.withClue
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * `Durability.ASYNC` and a crash (`docs/persistence.md`, "Durability: waiting for each step, or not"): a child JVM
 * runs [CrashGraph] with step checkpoints written behind it by a store slower than its steps, and is killed with
 * SIGKILL; a second one resumes the run. What the first left stored is a prefix of its checkpoints (sequences 1..n,
 * the last RUNNING); the resume starts no node whose completion was stored, runs every other once, and ends with the
 * state of an uninterrupted run.
 */
class AsyncDurabilityCrashTest {
    @TempDir
    lateinit var dir: Path

    private companion object {
        /** Nodes done before the kill: the chain and the fan-out's first nodes, with the writer well behind. */
        const val KILL_AFTER = 12
    }

    private fun child(vararg args: String, out: Path): Process =
        ChildJvm.start(CrashChild::class.java, args.toList(), out.toFile(), listOf("-Dtrellis.crash.async=true"))

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    fun `a run killed with step checkpoints unwritten resumes from the stored prefix and re-runs only the rest`(): Unit =
        runBlocking {
            val db = dir.resolve("runs.db")
            val side = dir.resolve("side.log")
            val result = dir.resolve("result.txt")
            val firstOut = dir.resolve("first.out")
            val secondOut = dir.resolve("second.out")

            val first = child("run", db.toString(), side.toString(), out = firstOut)
            try {
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40)
                while (SideLog.read(side).count { it.event == "done" } < KILL_AFTER) {
                    check(
                        first.isAlive,
                    ) { "The first child ended before it could be killed: ${ChildJvm.output(firstOut.toFile())}" }
                    check(
                        System.nanoTime() < deadline,
                    ) { "No $KILL_AFTER nodes done within 40 s: ${ChildJvm.output(firstOut.toFile())}" }
                    Thread.sleep(10) // polling a file of another process
                }
            } finally {
                first.destroyForcibly() // SIGKILL: the writer's queue dies with the process
                withClue("the first child must die") { first.waitFor(15, TimeUnit.SECONDS) shouldBe true }
            }
            withClue("killed, not exited: ${ChildJvm.output(firstOut.toFile())}") { first.exitValue() shouldBe 137 }
            val doneBeforeKill = SideLog.read(side).filter { it.event == "done" }.map { it.node }.toSet()

            val graph = CrashGraph.build(stepMillis = 1) {}
            val checkpointed = SqliteCheckpointStore(db).use { store ->
                val history = store.history(CrashGraph.RUN_ID)
                withClue("a prefix of the run's checkpoints") {
                    history.map { it.sequence } shouldBe (1L..history.size).toList()
                    history.last().status shouldBe "RUNNING"
                }
                graph.stateAt(store, CrashGraph.RUN_ID)[CrashGraph.Work.visited].toSet()
            }
            val unwritten = doneBeforeKill - checkpointed
            println("AsyncDurabilityCrashTest: stored $checkpointed; done but not stored at the kill $unwritten")
            withClue("a completion stored is a completion that ran") {
                (checkpointed - doneBeforeKill) shouldBe
                    emptySet()
            }
            unwritten.size shouldBeLessThanOrEqual Checkpointing.Durability.MAX_PENDING

            val second = child("resume", db.toString(), side.toString(), result.toString(), out = secondOut)
            try {
                withClue("the second child must finish: ${ChildJvm.output(secondOut.toFile())}") {
                    second.waitFor(60, TimeUnit.SECONDS) shouldBe true
                }
            } finally {
                second.destroyForcibly()
            }
            withClue(
                "the second child failed: ${ChildJvm.output(secondOut.toFile())}",
            ) { second.exitValue() shouldBe 0 }

            val reference = graph.invoke()
            reference.status shouldBe Status.COMPLETED
            val resumed = Files.readAllLines(result).filter { it.isNotBlank() }
                .associate { it.substringBeforeLast(' ') to it.substringAfterLast(' ') }
            resumed["status"] shouldBe "COMPLETED"
            resumed["visited"] shouldBe reference.state[CrashGraph.Work.visited].joinToString(",")
            resumed["total"] shouldBe reference.state[CrashGraph.Work.executions].toString()
            SqliteCheckpointStore(db).use { store ->
                graph.stateAt(store, CrashGraph.RUN_ID) shouldBe reference.state
                val history = store.history(CrashGraph.RUN_ID)
                history.map { it.sequence } shouldBe (1L..history.size).toList()
                history.last().status shouldBe "COMPLETED"
            }
            val all = SideLog.read(side)
            for (id in CrashGraph.nodeIds) {
                val startsAfter = all.count { it.event == "start" && it.node == id && it.pid == second.pid() }
                val doneAfter = all.count { it.event == "done" && it.node == id && it.pid == second.pid() }
                withClue("node $id: ${all.filter { it.node == id }}") {
                    if (id in checkpointed) startsAfter shouldBe 0 else doneAfter shouldBe 1
                }
            }
        }
}
