package dev.trellis.studio.timeline

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.studio.TestGraphs
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.w3c.dom.Document
import org.w3c.dom.Element
import java.io.ByteArrayInputStream
import javax.xml.parsers.DocumentBuilderFactory

/**
 * The static timeline page (`--timeline`, `RunTimeline.toHtml`) of composed runs, as a user reads it: each map task
 * and each subgraph child run in rows of its own, the composite nodes saying what their children did, a node that
 * never ran `not run`, conditional edges labelled; budget charges and compensations marked, from events and from
 * checkpoints alike.
 */
class ComposedTimelineTest {
    @Test
    fun `a map and a subgraph show one row per task and per child run, on the page and in the graph`() = runTest {
        val events = TestGraphs.composed.events().toList()
        val page = parse(RunTimeline.of(TestGraphs.composed, events).toHtml())
        val rows = page.all("g", "lane").map { it.getAttribute("data-row") }
        rows shouldContainAll listOf("run", "research[0]", "research[1]", "research[2]", "research[3]", "check")
        // Each task's three executions sit in its own row, not one bar per node for the four tasks together.
        val bars = page.all("g", "bar")
        for (task in 0..3) {
            bars.filter { it.lane().getAttribute("data-row") == "research[$task]" }.map { it.getAttribute("data-path") }
                .shouldContainAll(listOf("search", "summarize", "approve").map { "research[$task]/$it" })
        }
        bars.filter { it.lane().getAttribute("data-row") == "check" }.size shouldBe 3
        page.all("p", "meta").single().textContent shouldContain "${bars.size} executions"
        // plan, research, check and join; each task's 3 nodes; the child run's 3 (a task is its row, not a bar).
        bars.size shouldBe 4 + 4 * 3 + 3
        bars.count { it.lane().getAttribute("data-row") == "run" } shouldBe 4
        page.all("g", "lane").count { it.getAttribute("data-row") == "run" } shouldBe 1
        val graph = page.all("g", "gnode").associateBy { it.getAttribute("data-node") }
        graph.getValue("research").textContent shouldContain "4 tasks"
        graph.getValue("research").textContent shouldContain "search ×4"
        graph.getValue("research").textContent.contains("research ×") shouldBe false // the tasks are not its nodes
        graph.getValue("check").textContent shouldContain "search ×1"
        graph.getValue("redo").textContent shouldContain "not run"
        graph.getValue("redo").textContent.contains("PENDING") shouldBe false
        page.all("text", "edge-label").map { it.textContent }.count { it == "if" } shouldBe 2
        // The list of executions names every path, one row each.
        page.all("tr", null).count { it.getAttribute("data-path").startsWith("research[") } shouldBe 4 * 3
    }

    @Test
    fun `budget charges and compensations are marked on the bars of the executions they belong to`() = runTest {
        val events = TestGraphs.costly.events().toList()
        val timeline = RunTimeline.of(TestGraphs.costly, events)
        timeline.status shouldBe Status.FAILED
        val marks = timeline.marks.filter {
            it.kind == TimelineMark.Kind.BUDGET ||
                it.kind == TimelineMark.Kind.COMPENSATION
        }
        marks.map { it.kind to it.path } shouldBe listOf(
            TimelineMark.Kind.BUDGET to "book",
            TimelineMark.Kind.BUDGET to "pay",
            TimelineMark.Kind.COMPENSATION to "book",
            TimelineMark.Kind.COMPENSATION to "book",
        )
        marks.first().label shouldContain "usd"
        val page = parse(timeline.toHtml())
        page.all("g", "mark").map { it.getAttribute("data-kind") }.toSet() shouldContainAll
            setOf("BUDGET", "COMPENSATION", "FAILURE")
        page.all("g", "mark").first { it.getAttribute("data-kind") == "BUDGET" }.textContent shouldContain "usd"
    }

    @Test
    fun `a stored run marks its budget totals and its compensations at the checkpoints that record them`() = runTest {
        val store = InMemoryCheckpointStore()
        val options = RunOptions(runId = "costly-1", checkpointing = Checkpointing(store))
        assertThrows<GraphRunException> { TestGraphs.costly.invoke(options = options) }
        val timeline = RunTimeline.fromStore(TestGraphs.costly, store, "costly-1")
        timeline.status shouldBe Status.FAILED
        val budget = timeline.marks.filter { it.kind == TimelineMark.Kind.BUDGET }
        budget.map { it.path } shouldBe listOf("book", "pay")
        budget.first().label shouldContain "usd 0.25"
        budget.last().label shouldContain "usd 0.75"
        val compensations = timeline.marks.filter { it.kind == TimelineMark.Kind.COMPENSATION }
        compensations.map { it.path to it.execution }.toSet() shouldBe setOf("book" to 1)
        compensations.last().label shouldBe "compensated"
        val page = parse(timeline.toHtml())
        page.all("g", "mark").map { it.getAttribute("data-kind") }.toSet() shouldContainAll
            setOf("BUDGET", "COMPENSATION", "CHECKPOINT")
    }

    private fun Element.lane(): Element = parentNode as Element

    private fun parse(html: String): Document {
        val factory = DocumentBuilderFactory.newInstance()
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false)
        return factory.newDocumentBuilder().parse(ByteArrayInputStream(html.toByteArray()))
    }

    /** The elements named [tag] whose class list has [cls] (any when null). */
    private fun Document.all(tag: String, cls: String?): List<Element> {
        val list = getElementsByTagName(tag)
        return (0 until list.length).map { list.item(it) as Element }
            .filter { cls == null || cls in it.getAttribute("class").split(' ') }
    }
}
