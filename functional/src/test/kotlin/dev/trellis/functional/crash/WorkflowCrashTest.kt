package dev.trellis.functional.crash

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.testing.ChildJvm
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.random.Random

/**
 * Functional workflows killed with SIGKILL at random points in child JVMs, on SQLite and on PostgreSQL (a schema of its
 * own): a resumed run never runs again a task whose result was recorded before the kill (side effects counted in a
 * file), it ends with the output of an uninterrupted run, and a code change between a crash and the resume is
 * refused with a clear error before anything runs (`docs/semantics.md` §14).
 */
class WorkflowCrashTest {
    @TempDir
    lateinit var dir: Path

    private data class Line(val event: String, val task: String, val pid: Long)

    private fun lines(side: Path): List<Line> = if (!Files.exists(side)) {
        emptyList()
    } else {
        Files.readAllLines(side).filter { it.isNotBlank() }.map { line ->
            val (event, task, pid) = line.trim().split(" ")
            Line(event, task, pid.toLong())
        }
    }

    /** The names of the tasks whose result the store recorded. */
    private fun recorded(backend: String, location: String): Set<String> = runBlocking {
        CrashWorkflow.store(backend, location).use { store -> recorded(store) }
    }

    private suspend fun recorded(store: CheckpointStore): Set<String> =
        store.history(CrashWorkflow.RUN_ID).map { Json.parseToJsonElement(it.payload).jsonObject }
            .filter { it.getValue("type").jsonPrimitive.content == "done" }
            .map { it.getValue("name").jsonPrimitive.content }
            .toSet()

    private fun child(mode: String, backend: String, location: String, side: Path, name: String): Pair<Process, File> {
        val out = dir.resolve("$name.out").toFile()
        val result = dir.resolve("$name.result").toString()
        val args = listOf(mode, backend, location, side.toString(), result)
        return ChildJvm.start(CrashChild::class.java, args, out) to out
    }

    /** Waits until [process] logged [more] more `done` lines than [before], then kills it; false if it ended first. */
    private fun killAfter(process: Process, out: File, side: Path, before: Int, more: Int, random: Random): Boolean {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        try {
            while (lines(side).count { it.event == "done" } < before + more) {
                if (!process.isAlive) return false
                check(System.nanoTime() < deadline) {
                    "The child did not finish $more tasks in 60 s: ${ChildJvm.output(out)}"
                }
                Thread.sleep(5) // polling a file of another process
            }
            Thread.sleep(random.nextLong(0, 100)) // somewhere inside the next tasks
        } finally {
            process.destroyForcibly() // SIGKILL on Linux: no shutdown hook, no lease release
            withClue("the child must die") { process.waitFor(15, TimeUnit.SECONDS) shouldBe true }
        }
        return true
    }

    private fun crashAndResume(backend: String, location: String) {
        val seed = System.nanoTime()
        val random = Random(seed)
        println("WorkflowCrashTest($backend): seed $seed")
        val side = dir.resolve("side.log")
        val expected = runBlocking { CrashWorkflow.build(0) {}.run(1, InMemoryCheckpointStore()) }

        // 1. The first process starts the run and is killed after 2 to 6 side effects.
        val (first, firstOut) = child("run", backend, location, side, "first")
        withClue("the first child was killed: ${ChildJvm.output(firstOut)}") {
            killAfter(first, firstOut, side, 0, random.nextInt(2, 7), random) shouldBe true
            first.exitValue() shouldBe 137
        }
        val afterFirst = recorded(backend, location) // may be none, if the kill came before the first record

        // 2. Changed code resumes it: refused before anything runs, the record untouched.
        val (changed, changedOut) = child("changed", backend, location, side, "changed")
        withClue("the changed child ends: ${ChildJvm.output(changedOut)}") {
            changed.waitFor(60, TimeUnit.SECONDS) shouldBe true
            changed.exitValue() shouldBe 0
        }
        val report = Files.readString(dir.resolve("changed.result"))
        report shouldStartWith "nondeterminism 0 "
        report shouldContain "recorded step 'p1-1' at position 0, but the code now calls 'audit' there"
        report shouldContain "Finish the run with the code it started with, or start a new run"
        lines(side).filter { it.pid == changed.pid() } shouldBe emptyList()
        recorded(backend, location) shouldBe afterFirst

        // 3. A second process resumes it and is killed too (unless it finished first).
        val done = lines(side).count { it.event == "done" }
        val (second, secondOut) = child("resume", backend, location, side, "second")
        val killed = killAfter(second, secondOut, side, done, random.nextInt(2, 7), random)
        val afterSecond = recorded(backend, location)

        // 4. A third process finishes it.
        val (third, thirdOut) = child("resume", backend, location, side, "third")
        withClue("the third child finishes: ${ChildJvm.output(thirdOut)}") {
            third.waitFor(60, TimeUnit.SECONDS) shouldBe true
            third.exitValue() shouldBe 0
        }
        Files.readString(dir.resolve("third.result")) shouldBe "output $expected"
        if (!killed) Files.readString(dir.resolve("second.result")) shouldBe "output $expected"

        withClue("the killed children recorded some tasks") { afterSecond.size shouldBeGreaterThan 0 }
        val all = lines(side)
        println("WorkflowCrashTest($backend): recorded ${afterFirst.size} tasks, then ${afterSecond.size}, of 24")
        for (task in CrashWorkflow.taskNames) {
            withClue("task $task: ${all.filter { it.task == task }}") {
                if (task in afterFirst) {
                    all.count { it.task == task && it.event == "start" && it.pid != first.pid() } shouldBe 0
                }
                if (task in afterSecond) {
                    all.count { it.task == task && it.event == "start" && it.pid == third.pid() } shouldBe 0
                }
                all.count { it.task == task && it.event == "done" } shouldBeGreaterThan 0
            }
        }
        recorded(backend, location) shouldBe CrashWorkflow.taskNames.toSet()
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    fun `on SQLite, a workflow killed at random points resumes without re-running a recorded task`() {
        crashAndResume("sqlite", dir.resolve("runs.db").toString())
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    fun `on PostgreSQL, a workflow killed at random points resumes without re-running a recorded task`() {
        val schema = TestPostgres.newSchema()
        try {
            crashAndResume("postgres", schema)
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }
}
