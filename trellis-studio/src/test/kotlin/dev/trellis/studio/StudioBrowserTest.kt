package dev.trellis.studio

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.doubles.shouldBeGreaterThan
import io.kotest.matchers.doubles.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import org.openqa.selenium.By
import org.openqa.selenium.support.ui.ExpectedConditions

/**
 * The studio's pages in a real headless [Chromium] driven through WebDriver: the run list, a map run's lanes, a short
 * loop zoomed, a live run, a diff, an answer and a fork (the fleet's view: `StudioFleetTest`). With
 * `-Dtrellis.studio.screenshots=<directory>` they also write the screenshots of `docs/studio.md` there.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class StudioBrowserTest {
    private val store = InMemoryCheckpointStore()
    private val gate = CompletableDeferred<Unit>()
    private val gated = TestGraphs.gated(gate)
    private lateinit var studio: TrellisStudio
    private lateinit var chromium: Chromium
    private val driver get() = chromium.driver

    @BeforeAll
    fun open() {
        chromium = Chromium()
        runBlocking {
            val seed = Checkpointing(store, owner = "seed")
            TestGraphs.simple.invoke(
                stateOf(Doc.topic to "trees"),
                RunOptions(runId = "simple-1", checkpointing = seed),
            )
            TestGraphs.approval.invoke(
                stateOf(Doc.topic to "rivers"),
                RunOptions(runId = "approval-1", checkpointing = seed),
            )
            TestGraphs.fanout.invoke(options = RunOptions(runId = "fanout-1", checkpointing = seed))
        }
        studio = TrellisStudio.start(
            store,
            graphs = listOf(TestGraphs.simple, TestGraphs.approval, TestGraphs.fanout, TestGraphs.loop, gated),
        )
    }

    @AfterAll
    fun close() {
        if (::studio.isInitialized) studio.close()
        if (::chromium.isInitialized) chromium.close()
    }

    private fun wait(seconds: Long = 60) = chromium.wait(seconds)

    private fun waitFor(css: String) = chromium.waitFor(css)

    private fun all(css: String) = chromium.all(css)

    private fun page(path: String) = driver.get(studio.url.trimEnd('/') + path)

    private fun screenshot(name: String, at: String? = null) = chromium.screenshot(name, at)

    @Test
    @Order(1)
    fun `the run list shows the store's runs`() {
        page("/")
        waitFor("#runs tbody tr[data-run='fanout-1']")
        all("#runs tbody tr").map { it.getAttribute("data-run") } shouldContainAll
            listOf("approval-1", "fanout-1", "simple-1")
        driver.findElement(By.cssSelector("tr[data-run='approval-1']")).text shouldContain "INTERRUPTED"
        screenshot("studio-runs.png")
        driver.findElement(By.linkText("fanout-1")).click()
        waitFor("#run-status[data-status='COMPLETED']")
    }

    @Test
    @Order(2)
    fun `a map run has one lane per task`() {
        page("/run?id=fanout-1")
        waitFor("#timeline g.lane[data-row='research[3]']")
        val rows = all("#timeline g.lane").map { it.getAttribute("data-row") }.toSet()
        rows shouldContainAll listOf("run", "research[0]", "research[1]", "research[2]", "research[3]")
        for (task in 0..3) all("#executions tr[data-row='research[$task]']").size shouldBe 3
        driver.findElement(By.cssSelector("#graph g.gnode[data-node='research']")).text shouldContain "4 tasks"
        screenshot("studio-map-run.png", at = "#timeline")
    }

    /** Width in pixels of the bar of [path]'s execution [execution] on the drawn timeline. */
    private fun barWidth(path: String, execution: Int): Double = driver.findElement(
        By.cssSelector("#timeline g.bar[data-path='$path'][data-execution='$execution'] rect"),
    ).getAttribute("width")!!.toDouble()

    private fun zoom(): Double = driver.findElement(By.id("zoom-level")).getAttribute("data-zoom")!!.toDouble()

    /** Clicks [button] and waits for the timeline to be drawn at another zoom. */
    private fun zoomWith(button: By) {
        val before = driver.findElement(By.id("zoom-level")).getAttribute("data-from") to zoom()
        driver.findElement(button).click()
        wait().until {
            (driver.findElement(By.id("zoom-level")).getAttribute("data-from") to zoom()) != before
        }
    }

    @Test
    @Order(3)
    fun `a short loop after a long node is zoomed until its bars read, and fitted back`() {
        // A run of the studio, so that its timeline is exact: 3 s of `slow`, then six executions of about 5 ms.
        val handle = studio.start(TestGraphs.loop, runId = "loop-1")
        runBlocking { handle.await() }.status.name shouldBe "COMPLETED"
        page("/run?id=loop-1")
        waitFor("#timeline g.bar[data-path='review'][data-execution='3']")
        zoom() shouldBe 1.0
        // The whole run: the loop's bars are slivers, too thin for their labels.
        val fitted = barWidth("write", 2)
        fitted shouldBeLessThan 20.0
        all("#timeline g.bar[data-path='write'][data-execution='2'] text").size shouldBe 0
        // Zooming to an execution from the list: its bar takes a third of the plot, labelled.
        zoomWith(By.cssSelector("button.zoom-to[data-path='write'][data-execution='2']"))
        zoom() shouldBeGreaterThan 20.0
        val zoomed = barWidth("write", 2)
        zoomed shouldBeGreaterThan 200.0
        waitFor("#timeline g.bar[data-path='write'][data-execution='2'] text").text shouldContain "write #2"
        all("#timeline g.bar[data-path='slow']").size shouldBe 0 // outside the window: left out
        screenshot("studio-zoom.png", at = "#timeline-section")
        // Out halves the bar, in doubles it back; Fit shows the whole run again.
        zoomWith(By.id("zoom-out"))
        barWidth("write", 2) shouldBe (zoomed / 2).plusOrMinus(zoomed * 0.05)
        zoomWith(By.id("zoom-in"))
        barWidth("write", 2) shouldBe zoomed.plusOrMinus(zoomed * 0.05)
        zoomWith(By.id("zoom-fit"))
        zoom() shouldBe 1.0
        barWidth("write", 2) shouldBe fitted
        all("#timeline g.bar[data-path='slow']").size shouldBe 1
    }

    @Test
    @Order(4)
    fun `a live run's nodes turn from running to completed`() {
        studio.start(gated, runId = "gated-1")
        page("/run?id=gated-1")
        waitFor("#graph g.gnode[data-node='wait'][data-status='EXECUTING']")
        driver.findElement(By.cssSelector("#run-status")).text shouldContain "live"
        screenshot("studio-live.png")
        gate.complete(Unit)
        waitFor("#graph g.gnode[data-node='last'][data-status='COMPLETED']")
        waitFor("#run-status[data-status='COMPLETED']")
        driver.findElement(By.cssSelector("#graph g.gnode[data-node='wait']")).getAttribute("data-status") shouldBe
            "COMPLETED"
    }

    @Test
    @Order(5)
    fun `two checkpoints are compared`() {
        page("/run?id=simple-1")
        waitFor("#checkpoints tbody tr[data-sequence]")
        val last = all("#checkpoints tbody tr[data-sequence]").last().getAttribute("data-sequence")
        driver.findElement(By.id("from-1")).click()
        driver.findElement(By.id("to-$last")).click()
        driver.findElement(By.id("diff-button")).click()
        waitFor("#diff tr[data-key='words']")
        driver.findElement(By.cssSelector("#diff tr[data-key='notes']")).text shouldContain "chars"
        driver.findElement(By.cssSelector("#diff tr[data-key='draft']")).text shouldContain "About trees"
        screenshot("studio-diff.png", at = "#checkpoints")
    }

    @Test
    @Order(6)
    fun `an interrupt is answered and the run completes`() {
        page("/run?id=approval-1")
        wait().until(ExpectedConditions.visibilityOfElementLocated(By.id("answer-form")))
        driver.findElement(By.id("answer-prompt")).text shouldContain "Publish"
        driver.findElement(By.id("answer-text")).sendKeys("yes")
        screenshot("studio-answer.png")
        driver.findElement(By.id("answer-button")).click()
        waitFor("#run-status[data-status='COMPLETED']")
        waitFor("#graph g.gnode[data-node='publish'][data-status='COMPLETED']")
    }

    @Test
    @Order(7)
    fun `a fork with an edited value runs to completion`() {
        page("/run?id=simple-1")
        waitFor("#fork-fields textarea[data-key='words']")
        val words = driver.findElement(By.cssSelector("#fork-fields textarea[data-key='words']"))
        words.clear()
        words.sendKeys("\"many\"")
        driver.findElement(By.id("fork-button")).click()
        wait().until { driver.findElement(By.cssSelector(".field-error[data-key='words']")).text.isNotEmpty() }
        driver.findElement(By.cssSelector(".field-error[data-key='words']")).text shouldContain "Int"
        screenshot("studio-fork-error.png")
        words.clear()
        words.sendKeys("0")
        val topic = driver.findElement(By.cssSelector("#fork-fields textarea[data-key='topic']"))
        topic.clear()
        topic.sendKeys("\"forests\"")
        driver.findElement(By.id("fork-button")).click()
        wait().until { driver.currentUrl!!.contains("simple-1-fork-") }
        waitFor("#run-status[data-status='COMPLETED']")
        waitFor("#checkpoints tbody tr[data-sequence]")
        driver.findElement(By.id("meta")).text shouldContain "forked from simple-1#"
        val last = all("#checkpoints tbody tr[data-sequence]").last().getAttribute("data-sequence")
        driver.findElement(By.cssSelector("button.state-button[data-sequence='$last']")).click()
        waitFor("#state-table tr[data-key='draft']").text shouldContain "About forests"
        screenshot("studio-fork.png", at = "#state")
    }
}
