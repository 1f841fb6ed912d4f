package dev.trellis.studio

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import org.openqa.selenium.By
import org.openqa.selenium.support.ui.Select

/**
 * In a real headless [Chromium]: the runs page filtered by status and by graph and paged (56 runs: two pages of 50),
 * and the page of a composed run — a row per map task and for the subgraph's child run, `not run` on the node that
 * never ran — and of a run with budget charges and a compensation, marked on its timeline.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StudioRunListBrowserTest {
    private val store = InMemoryCheckpointStore()
    private lateinit var studio: TrellisStudio
    private lateinit var chromium: Chromium
    private val driver get() = chromium.driver

    @BeforeAll
    fun open() {
        chromium = Chromium()
        runBlocking {
            val seed = Checkpointing(store, owner = "seed")
            for (i in 1..52) {
                val id = "page-%02d".format(i)
                TestGraphs.simple.invoke(stateOf(Doc.topic to id), RunOptions(runId = id, checkpointing = seed))
            }
            TestGraphs.approval.invoke(options = RunOptions(runId = "ask-1", checkpointing = seed))
            TestGraphs.composed.invoke(options = RunOptions(runId = "composed-1", checkpointing = seed))
            assertThrows<GraphRunException> {
                TestGraphs.costly.invoke(options = RunOptions(runId = "costly-1", checkpointing = seed))
            }
        }
        studio = TrellisStudio.start(store, graphs = listOf(TestGraphs.simple, TestGraphs.composed, TestGraphs.costly))
        // A run the studio runs, so that its timeline is exact (events, not checkpoints).
        val costly = studio.start(TestGraphs.costly, runId = "costly-2")
        runCatching { runBlocking { costly.await() } } // it fails (card declined): its result or the error
    }

    @AfterAll
    fun close() {
        if (::studio.isInitialized) studio.close()
        if (::chromium.isInitialized) chromium.close()
    }

    private fun page(path: String) = driver.get(studio.url.trimEnd('/') + path)

    private fun shownRuns(): List<String> = chromium.all("#runs tbody tr").map { it.getAttribute("data-run")!! }

    /** Waits until the table shows another set of runs than [before]. */
    private fun awaitOther(before: List<String>) = chromium.wait().until {
        shownRuns() != before &&
            shownRuns().isNotEmpty()
    }

    @Test
    fun `the run list is filtered by status and by graph, and paged`() {
        page("/")
        chromium.waitFor("#runs tbody tr[data-run]")
        val first = shownRuns()
        first.size shouldBe 50
        first.first() shouldBe "costly-2" // newest first: the run the studio started last
        driver.findElement(By.id("next")).click()
        awaitOther(first)
        val second = shownRuns()
        second.size shouldBe 6
        (first + second).toSet().size shouldBe 56 // every run once, over the two pages
        second.takeLast(3) shouldBe listOf("page-03", "page-02", "page-01") // the oldest last
        driver.findElement(By.id("next")).isEnabled shouldBe false
        driver.findElement(By.id("first")).click()
        awaitOther(second)
        shownRuns() shouldBe first

        Select(driver.findElement(By.id("status"))).selectByVisibleText("FAILED")
        driver.findElement(By.cssSelector("#filters button[type='submit']")).click()
        chromium.wait().until { shownRuns().toSet() == setOf("costly-1", "costly-2") }
        driver.findElement(By.cssSelector("tr[data-run='costly-1'] .error-cell")).text shouldContain "card declined"
        driver.currentUrl!! shouldContain "status=FAILED"
        Select(driver.findElement(By.id("status"))).selectByVisibleText("any")
        driver.findElement(By.id("graph")).sendKeys("composed")
        driver.findElement(By.cssSelector("#filters button[type='submit']")).click()
        chromium.wait().until { shownRuns() == listOf("composed-1") }
        driver.findElement(By.id("next")).isEnabled shouldBe false
        chromium.screenshot("studio-runs-filtered.png")
    }

    @Test
    fun `a composed run has a row per task and for the child run, and marks budgets and compensations`() {
        page("/run?id=composed-1")
        chromium.waitFor("#timeline g.lane[data-row='check']")
        chromium.all("#timeline g.lane").map { it.getAttribute("data-row") }.toSet() shouldContainAll
            listOf("run", "research[0]", "research[1]", "research[2]", "research[3]", "check")
        chromium.all("#executions tr[data-row='check']").size shouldBe 3
        driver.findElement(By.cssSelector("#graph g.gnode[data-node='redo']")).text shouldContain "not run"
        driver.findElement(By.cssSelector("#graph g.gnode[data-node='check']")).text shouldContain "search ×1"

        for (run in listOf("costly-1", "costly-2")) { // recorded (from checkpoints), then exact (from events)
            page("/run?id=$run")
            chromium.waitFor("#run-status[data-status='FAILED']")
            chromium.waitFor("#timeline g.mark[data-kind='COMPENSATION']")
            val kinds = chromium.all("#timeline g.mark").map { it.getAttribute("data-kind") }.toSet()
            kinds shouldContainAll listOf("BUDGET", "COMPENSATION", "FAILURE", "CHECKPOINT")
            chromium.all("#timeline g.mark[data-kind='BUDGET']").size shouldBe 2
        }
        chromium.screenshot("studio-marks.png", at = "#timeline-section")
    }
}
