package dev.trellis.functional

import dev.trellis.checkpoint.InMemoryCheckpointStore
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

class WorkflowTest : FunSpec({
    class Crash : RuntimeException("simulated crash")

    val executions = ConcurrentHashMap<String, AtomicInteger>()

    fun ran(name: String) = executions.getOrPut(name) { AtomicInteger() }.incrementAndGet()

    fun count(name: String) = executions[name]?.get() ?: 0

    var crashAt: String? = null
    val report = workflow<String, String>("report") { topic ->
        val plan = task("plan") { ran("plan").let { "plan($topic)" } }
        val parts = listOf("a", "b", "c").map { part ->
            taskAsync("search") {
                delay((3 - part[0].code % 3).milliseconds) // finish out of call order
                ran("search-$part")
                "$part:$plan"
            }
        }.awaitAll()
        task("write") {
            ran("write")
            if (crashAt == "write") throw Crash()
            parts.joinToString(",")
        }
    }

    beforeTest {
        executions.clear()
        crashAt = null
    }

    test("a resumed run replays completed tasks without running them again") {
        val store = InMemoryCheckpointStore()
        crashAt = "write"
        shouldThrow<Crash> { report.run("sky", store, runId = "r1") }
        count("plan") shouldBe 1
        count("search-a") shouldBe 1
        crashAt = null
        report.run("sky", store, runId = "r1") shouldBe "a:plan(sky),b:plan(sky),c:plan(sky)"
        count("plan") shouldBe 1
        listOf("a", "b", "c").forEach { count("search-$it") shouldBe 1 }
        count("write") shouldBe 2 // the crashed task runs again: at least once
    }

    test("a completed run returns its recorded output, running nothing") {
        val store = InMemoryCheckpointStore()
        val first = report.run("sky", store, runId = "r2")
        executions.clear()
        report.run("ignored", store, runId = "r2") shouldBe first
        executions.values.sumOf { it.get() } shouldBe 0
    }

    test("the code changing between a crash and the resume is detected and reported") {
        val store = InMemoryCheckpointStore()
        crashAt = "write"
        shouldThrow<Crash> { report.run("sky", store, runId = "r3") }
        val changed = workflow<String, String>("report") { topic ->
            task("outline") { "outline($topic)" }
        }
        val e = shouldThrow<WorkflowNondeterminismException> { changed.run("sky", store, runId = "r3") }
        e.position shouldBe 0
        e.message!! shouldContain "recorded step 'plan' at position 0, but the code now calls 'outline' there"
    }

    test("fewer tasks than recorded is a change too") {
        val store = InMemoryCheckpointStore()
        crashAt = "write"
        shouldThrow<Crash> { report.run("sky", store, runId = "r4") }
        val shorter = workflow<String, String>("report") { topic -> task("plan") { "plan($topic)" } }
        shouldThrow<WorkflowNondeterminismException> { shorter.run("sky", store, runId = "r4") }
            .message!! shouldContain "recorded 5 steps, but the code now calls only 1"
    }
})
