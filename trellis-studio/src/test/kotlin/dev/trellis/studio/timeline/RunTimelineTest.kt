package dev.trellis.studio.timeline

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.toMermaid
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.w3c.dom.Document
import org.w3c.dom.Element
import java.io.ByteArrayInputStream
import javax.xml.parsers.DocumentBuilderFactory
import kotlin.time.Duration.Companion.milliseconds

/** The run timeline page (`docs/observability.md`): parsed back, its lanes, bars, marks and counts are checked. */
class RunTimelineTest {
    object S : StateSchema("timeline") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val answer = key("answer", default = "")
    }

    private val fanOut = graph("fan-out", S) {
        var failures = 0
        val plan = node("plan") {
            delay(10.milliseconds)
            set(S.log, listOf("plan"))
        }
        val web = node("web", retry = Retry.fixed(3, 5.milliseconds)) {
            delay(40.milliseconds)
            if (failures++ == 0) error("flaky search")
            set(S.log, listOf("web"))
        }
        val papers = node("papers") {
            delay(30.milliseconds)
            emit("found 3 papers")
            delay(30.milliseconds)
            set(S.log, listOf("papers"))
        }
        val write = node("write") {
            delay(20.milliseconds)
            set(S.answer, "done")
        }
        start(plan)
        plan then web
        plan then papers
        web then write
        papers then write
    }

    @Test
    fun `a run's page shows parallel executions in lanes, with retries, custom events, counts and the final state`() =
        runTest {
            val events = fanOut.events().toList()
            val timeline = RunTimeline.of(fanOut, events)
            timeline.status shouldBe Status.COMPLETED
            timeline.laneCount shouldBe 2
            timeline.bars.map { it.nodeId } shouldBe listOf("plan", "web", "papers", "write")
            timeline.bars.single { it.nodeId == "web" }.attempts shouldBe 2

            val page = parse(timeline.toHtml())
            page.all("g", "lane").size shouldBe 2
            val bars = page.all("g", "bar")
            bars.map { it.getAttribute("data-status") }.toSet() shouldBe setOf("COMPLETED")
            // web and papers overlap: they sit in different lanes.
            bars.associate {
                it.getAttribute(
                    "data-node",
                ) to (it.parentNode as Element).getAttribute("data-lane")
            } shouldBe
                mapOf("plan" to "0", "web" to "0", "papers" to "1", "write" to "0")
            page.all("g", "mark").map { it.getAttribute("data-kind") }.sorted() shouldBe listOf("CUSTOM", "RETRY")
            val nodes = page.all(
                "g",
                "gnode",
            ).associate { it.getAttribute("data-node") to it.getAttribute("data-count") }
            nodes shouldBe mapOf("plan" to "1", "web" to "1", "papers" to "1", "write" to "1")
            page.all("tr", null).single { it.getAttribute("data-key") == "answer" }.textContent shouldContain "done"
            page.all("path", "edge").size shouldBe 6 // start->plan, 2 fan-out, 2 fan-in, write->end
        }

    @Test
    fun `a failed execution is a failed bar with a failure mark, and the graph shows the count of a loop`() = runTest {
        val loop = graph("loop", S) {
            val step = node("step") {
                delay(5.milliseconds)
                set(S.log, listOf("step"))
                if (get(S.log).size == 3) error("third time unlucky")
            }
            start(step)
            step.route(step, END) { if (it[S.log].size < 5) step else END }
        }
        val events = loop.events().toList()
        val page = parse(RunTimeline.of(loop, events).toHtml())
        page.all("g", "bar").map { it.getAttribute("data-status") } shouldBe listOf("COMPLETED", "COMPLETED", "FAILED")
        page.all("g", "mark").map { it.getAttribute("data-kind") } shouldBe listOf("FAILURE")
        val step = page.all("g", "gnode").single()
        step.getAttribute("data-count") shouldBe "3"
        step.getAttribute("data-status") shouldBe "FAILED"
        page.all("path", "back").size shouldBe 1
        page.all("p", "error").single().textContent shouldContain "third time unlucky"
    }

    @Test
    fun `a stored run's page is rebuilt from its checkpoints, interrupt included`() = runTest {
        val store = InMemoryCheckpointStore()
        val ask = graph("ask", S) {
            val draft = node("draft") {
                delay(10.milliseconds)
                set(S.log, listOf("draft"))
            }
            val approve = node("approve") { set(S.answer, interrupt("ship it?")) }
            start(draft)
            draft then approve
        }
        val options = RunOptions(runId = "stored-1", checkpointing = Checkpointing(store))
        ask.invoke(options = options).status shouldBe Status.INTERRUPTED
        val paused = RunTimeline.fromStore(ask, store, "stored-1")
        paused.approximate shouldBe true
        paused.status shouldBe Status.INTERRUPTED
        paused.marks.count { it.kind == TimelineMark.Kind.INTERRUPT } shouldBe 1

        ask.resume("stored-1", options, "yes").status shouldBe Status.COMPLETED
        val timeline = RunTimeline.fromStore(ask, store, "stored-1")
        timeline.status shouldBe Status.COMPLETED
        val page = parse(timeline.toHtml())
        page.all("g", "bar").map { it.getAttribute("data-node") + "#" + it.getAttribute("data-execution") } shouldBe
            listOf("draft#1", "approve#1", "approve#1")
        page.all("g", "bar").map { it.getAttribute("data-status") } shouldBe
            listOf("COMPLETED", "INTERRUPTED", "COMPLETED")
        page.all("g", "mark").count { it.getAttribute("data-kind") == "CHECKPOINT" } shouldBe
            store.history("stored-1").size
        page.all("g", "mark").count { it.getAttribute("data-kind") == "INTERRUPT" } shouldBe 1
        page.all("g", "gnode").associate { it.getAttribute("data-node") to it.getAttribute("data-count") } shouldBe
            mapOf("draft" to "1", "approve" to "1")
        page.all("tr", null).single { it.getAttribute("data-key") == "answer" }.textContent shouldContain "yes"
        page.all("p", "note").size shouldBe 1
    }

    @Test
    fun `the Mermaid drawing of a result shows each node's status and count`() = runTest {
        val result = fanOut.invoke()
        val text = fanOut.toMermaid(result)
        text shouldContain "n1[\"web<br/>COMPLETED ×1\"]"
        text shouldContain "class n0,n1,n2,n3 completed"
        text shouldContain "classDef failed"
    }

    @Test
    fun `the events without a terminal one make a timeline of a run still going`() = runTest {
        val events = fanOut.events().toList().filter {
            it !is RunEvent.Terminal && it !is RunEvent.NodeCompleted ||
                (it as? RunEvent.NodeCompleted)?.nodeId == "plan"
        }
        val timeline = RunTimeline.of(fanOut, events)
        timeline.status shouldBe Status.EXECUTING
        timeline.bars.filter { it.status == Status.EXECUTING }.map { it.nodeId }.toSet() shouldBe
            setOf("web", "papers", "write")
    }

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
