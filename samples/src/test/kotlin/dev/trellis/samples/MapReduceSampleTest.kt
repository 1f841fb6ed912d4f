package dev.trellis.samples

import com.github.ajalt.mordant.rendering.AnsiLevel
import com.github.ajalt.mordant.terminal.Terminal
import com.github.ajalt.mordant.terminal.TerminalRecorder
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldNotContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Test

/** The map-reduce sample, run in virtual time: unattended, answered interactively, and as JSON lines. */
class MapReduceSampleTest {
    private fun TestScope.context(ask: (suspend (Interrupt) -> String)? = null) =
        SampleContext(StandardTestDispatcher(testScheduler), testScheduler.timeSource, ask)

    private suspend fun TestScope.runSample(
        ask: (suspend (Interrupt) -> String)? = null,
    ): Pair<SampleOutcome, List<RunEvent>> {
        val events = ArrayList<RunEvent>()
        val outcome = MapReduceSample.run(context(ask)) { events += it }
        return outcome to events
    }

    private val subQuestions = MapReduceSample.SUB_QUESTIONS

    @Test
    fun `unattended, it plans, researches every sub-question in parallel, retries the flaky search and joins in task order`() =
        runTest {
            val (outcome, events) = runSample()
            val result = outcome.result
            result.status shouldBe Status.COMPLETED
            result.state[Inquiry.subQuestions] shouldBe subQuestions
            result.state[Inquiry.findings].map { it.substringBefore('?') + "?" } shouldContainExactly subQuestions
            result.state[Inquiry.report] shouldStartWith "Report on 'Why is the sky blue?': 1. What is Rayleigh"
            result.node("research").executions shouldBe 1
            result.node("write").executions shouldBe 1
            result.children.keys shouldBe subQuestions.indices.map { "research[$it]" }.toSet()
            result.child("research[${MapReduceSample.FLAKY}]").node("search").attempts shouldBe 2
            result.child("research[0]").node("search").attempts shouldBe 1
            result.child("research[1]").state[SubResearch.verdict] shouldBe "auto-approved"

            events.filterIsInstance<RunEvent.NodeRetrying>().map { it.path } shouldContainExactly
                listOf("research[${MapReduceSample.FLAKY}]/search")
            events.none { it is RunEvent.RunInterrupted } shouldBe true
            // The tasks ran at once and finished out of order; the findings are still in task order.
            val taskStarts = events.filterIsInstance<RunEvent.NodeStarted>().filter { it.task >= 0 && '/' !in it.path }
            val firstTaskEnd = events.indexOfFirst { it is RunEvent.NodeCompleted && it.path.matches(TASK) }
            taskStarts.map { it.path } shouldContainExactly subQuestions.indices.map { "research[$it]" }
            taskStarts.all { events.indexOf(it) < firstTaskEnd } shouldBe true
            val finished = events.filterIsInstance<RunEvent.NodeCompleted>().filter { it.path.matches(TASK) }
            finished.map { it.task } shouldNotContainExactly subQuestions.indices.toList()
            outcome.notes.first() shouldBe "tasks finished in order ${finished.joinToString { "${it.task}" }}; " +
                "findings joined in task order"
            outcome.notes[1] shouldBe "search calls per sub-question: [0]=1, [1]=1, [2]=2, [3]=1"
        }

    @Test
    fun `interactive, one child run asks by path, and the resumed run re-runs only that child's approve node`() =
        runTest {
            val asked = ArrayList<Interrupt>()
            val (outcome, events) = runSample { interrupt ->
                asked += interrupt
                "yes"
            }
            val approval = MapReduceSample.APPROVAL
            asked.map { it.path } shouldContainExactly listOf("research[$approval]/approve")
            asked.single().payload shouldBe "Include the finding on '${subQuestions[approval]}'? (yes/no)"
            events.filterIsInstance<RunEvent.RunInterrupted>().size shouldBe 1
            val result = outcome.result
            result.status shouldBe Status.COMPLETED
            result.state[Inquiry.findings].size shouldBe subQuestions.size
            result.child("research[$approval]").state[SubResearch.verdict] shouldBe "yes"
            // Completed nodes and tasks did not run again on resume: one search per sub-question, two for the flaky one.
            outcome.notes[1] shouldBe "search calls per sub-question: [0]=1, [1]=1, [2]=2, [3]=1"
            val approves = events.filterIsInstance<RunEvent.NodeStarted>().filter { it.path.endsWith("/approve") }
            approves.map { it.path }.filter { it == "research[$approval]/approve" }.size shouldBe 2
            approves.size shouldBe subQuestions.size + 1
            outcome.notes shouldContainExactly outcome.notes.take(3) +
                "answered by path: research[$approval]/approve -> yes" + outcome.notes.last()
        }

    @Test
    fun `interactive, answering no leaves that sub-question's finding out of the report`() = runTest {
        val result = runSample { "no" }.first.result
        result.status shouldBe Status.COMPLETED
        result.state[Inquiry.findings].map { it.substringBefore('?') + "?" } shouldContainExactly
            subQuestions.filterIndexed { i, _ -> i != MapReduceSample.APPROVAL }
    }

    @Test
    fun `json lines carry each node event's path and task, and lists as arrays`() = runTest {
        val (_, events) = runSample()
        val lines = events.map { Json.parseToJsonElement(it.toJson().toString()).jsonObject }
        val nodeLines = lines.filter { it.containsKey("node") && it.getValue("type").jsonPrimitive.content != "Custom" }
        nodeLines.size shouldBe events.count { it is RunEvent.NodeEvent && it !is RunEvent.Custom }
        val paths = nodeLines.map { it.getValue("path").jsonPrimitive.content to it.getValue("task").jsonPrimitive.int }
        // The map's own events and the top-level nodes have task -1; each task's own events name their index.
        paths.filter { '/' !in it.first }.toSet() shouldBe
            setOf("plan" to -1, "research" to -1, "write" to -1) + subQuestions.indices.map { "research[$it]" to it }
        paths.map { it.first }.filter { '/' in it }.toSet() shouldBe
            subQuestions.indices.flatMap {
                i ->
                listOf("search", "summarize", "approve").map { "research[$i]/$it" }
            }.toSet()
        val retry = lines.single { it.getValue("type").jsonPrimitive.content == "NodeRetrying" }
        retry.getValue("path").jsonPrimitive.content shouldBe "research[${MapReduceSample.FLAKY}]/search"
        retry.getValue("node").jsonPrimitive.content shouldBe "search"
        val edge = lines.first {
            it.getValue("type").jsonPrimitive.content == "EdgeTaken" &&
                it.toString().contains("[0]/")
        }
        edge.getValue("from").jsonPrimitive.content shouldBe "research[0]/search"
        val state = lines.last().getValue("state").jsonObject
        state.getValue("subQuestions").jsonArray.map { it.jsonPrimitive.content } shouldBe subQuestions
        state.getValue("findings").jsonArray.size shouldBe subQuestions.size
    }

    @Test
    fun `the console view indents child nodes under their task`() = runTest {
        val terminal = TerminalRecorder(AnsiLevel.NONE, width = 200)
        val view = ConsoleView(Terminal(terminalInterface = terminal), live = false)
        runSample().second.forEach(view::onEvent)
        val lines = terminal.output().lines().map { STAMP.replace(it, "") }
        lines.single { it.contains("research[2]/search#1 attempt 1 failed") } shouldStartWith "    ↻ "
        lines.first { it.contains("research[0]#1 started") } shouldBe "  ▶ research[0]#1 started"
        lines.first { it.contains("research[0]/search#1 started") } shouldBe "    ▶ research[0]/search#1 started"
        lines.first { it.contains("research#1 started") } shouldBe "▶ research#1 started"
    }

    private companion object {
        val TASK = Regex("research\\[\\d+]")
        val STAMP = Regex("^\\s*\\d+ ms ")
    }
}
