package dev.trellis.functional

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.functional.docs.approve
import dev.trellis.functional.docs.publish
import dev.trellis.functional.docs.reviewGraph
import dev.trellis.functional.docs.summary
import dev.trellis.functional.docs.watch
import dev.trellis.functional.docs.write
import dev.trellis.graph.Graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.flow.Flow
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.extension
import kotlin.io.path.isRegularFile

/**
 * Every Kotlin and Java block of docs/functional.md is in a test source of this module, line by line (indentation
 * aside), and the code runs here or in WorkflowJavaTest.
 */
class DocSnippetsTest : FunSpec({
    val module = Path.of("").toAbsolutePath()

    test("every block of docs/functional.md is in a test source") {
        val doc = Files.readString(module.resolveSibling("docs/functional.md"))
        val blocks = Regex("^```(kotlin|java)\\n(.*?)^```$", setOf(RegexOption.MULTILINE, RegexOption.DOT_MATCHES_ALL))
            .findAll(doc).map { it.groupValues[1] to it.groupValues[2] }.toList()
        blocks.map { it.first }.toSet() shouldBe setOf("kotlin", "java")
        val sources = Files.walk(module.resolve("src/test")).use { paths ->
            paths.filter { it.isRegularFile() && it.extension in setOf("kt", "java") }.toList()
        }.map { path -> Files.readAllLines(path).map { it.trim() } }
        for ((language, block) in blocks) {
            val lines = block.lines().map { it.trim() }.filter { it.isNotEmpty() }
            withClue("a $language block of docs/functional.md is not in a test source:\n$block") {
                sources.any { source -> contains(source.filter { it.isNotEmpty() }, lines) } shouldBe true
            }
        }
    }

    test("the report runs") {
        write(InMemoryCheckpointStore()) shouldBe "findings on the sky: causes; findings on the sky: effects"
    }

    test("the approval asks, is answered, and its events and tracing run") {
        val store = InMemoryCheckpointStore()
        approve(store) shouldBe "published draft 7"
        val graphs = mutableListOf<String>()
        val tracing = object : RunInstrumentation {
            override fun instrument(
                graph: Graph,
                options: RunOptions,
                resumedRunId: String?,
                run: (RunOptions) -> Flow<RunEvent>,
            ): Flow<RunEvent> = run(options).also { graphs += graph.id }
        }
        watch(store, tracing).map { it.toString() }
            .shouldContainExactly("Started(check@0)", "Completed(check@0)", "checked draft 8")
        graphs shouldContainExactly listOf("approval")
    }

    test("a graph as a task, and the workflow as a node") {
        summary.run("one two three", InMemoryCheckpointStore()) shouldBe "3 words"
        val store = InMemoryCheckpointStore()
        val review = reviewGraph(store)
        val options = RunOptions(runId = "review-1", checkpointing = Checkpointing(store))
        val paused = review.invoke(stateOf(dev.trellis.functional.docs.Doc.draft to " d "), options)
        paused.status shouldBe Status.INTERRUPTED
        val done = review.resume("review-1", options, "no")
        done.status shouldBe Status.COMPLETED
        done.state[dev.trellis.functional.docs.Doc.outcome] shouldBe "kept d"
        done.shouldBeInstanceOf<dev.trellis.runtime.RunResult>()
    }

    test("a graph task that asks pauses the workflow, and the answer resumes it") {
        publish(InMemoryCheckpointStore()) shouldBe "published tides"
    }
})

/** Whether [lines] appear in [source] one after the other. */
private fun contains(source: List<String>, lines: List<String>): Boolean =
    lines.isEmpty() || source.indices.any { start -> lines.indices.all { source.getOrNull(start + it) == lines[it] } }
