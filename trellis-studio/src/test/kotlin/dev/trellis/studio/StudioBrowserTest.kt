package dev.trellis.studio

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import org.openqa.selenium.By
import org.openqa.selenium.OutputType
import org.openqa.selenium.TakesScreenshot
import org.openqa.selenium.WebDriver
import org.openqa.selenium.chrome.ChromeDriver
import org.openqa.selenium.chrome.ChromeDriverService
import org.openqa.selenium.chrome.ChromeOptions
import org.openqa.selenium.support.ui.ExpectedConditions
import org.openqa.selenium.support.ui.WebDriverWait
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration

/**
 * The studio's pages in a real headless Chromium (Debian's `chromium` and `chromium-driver`), driven through
 * WebDriver: the run list, a map run's lanes, a live run, a diff, an answer and a fork. The screenshots they take are
 * those of `docs/studio.md` (`docs/images/studio-*.png`). Without Chromium the tests are skipped, except on CI.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class StudioBrowserTest {
    private val store = InMemoryCheckpointStore()
    private val gate = CompletableDeferred<Unit>()
    private val gated = TestGraphs.gated(gate)
    private lateinit var studio: TrellisStudio
    private lateinit var driver: WebDriver
    private lateinit var profile: Path
    private val images = Path.of("").toAbsolutePath().resolveSibling("docs").resolve("images")

    @BeforeAll
    fun open() {
        val chromium = listOf(
            "/usr/bin/chromium",
            "/usr/bin/chromium-browser",
        ).map(::File).firstOrNull { it.canExecute() }
        val chromedriver = listOf("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver").map(::File)
            .firstOrNull { it.canExecute() }
        if (chromium == null || chromedriver == null) {
            check(System.getenv("CI") == null) {
                "Chromium or chromedriver is missing on CI: install them (apt-get install -y chromium chromium-driver)."
            }
            assumeTrue(false, "Browser tests skipped: install chromium and chromium-driver to run them.")
        }
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
            graphs = listOf(TestGraphs.simple, TestGraphs.approval, TestGraphs.fanout, gated),
        )
        profile = Files.createTempDirectory("studio-chromium")
        val options = ChromeOptions().setBinary(chromium!!).addArguments(
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--user-data-dir=$profile",
            "--window-size=1400,1000",
        )
        val service = ChromeDriverService.Builder().usingDriverExecutable(chromedriver!!).usingAnyFreePort().build()
        driver = ChromeDriver(service, options)
        Files.createDirectories(images)
    }

    @AfterAll
    fun close() {
        if (::driver.isInitialized) driver.quit()
        if (::studio.isInitialized) studio.close()
        if (::profile.isInitialized) profile.toFile().deleteRecursively()
    }

    private fun wait(seconds: Long = 60) = WebDriverWait(driver, Duration.ofSeconds(seconds))

    private fun waitFor(css: String) = wait().until(ExpectedConditions.presenceOfElementLocated(By.cssSelector(css)))

    private fun all(css: String) = driver.findElements(By.cssSelector(css))

    private fun page(path: String) = driver.get(studio.url.trimEnd('/') + path)

    private fun screenshot(name: String, at: String? = null) {
        if (at != null) {
            (driver as org.openqa.selenium.JavascriptExecutor)
                .executeScript("document.querySelector(arguments[0]).scrollIntoView()", at)
        }
        Files.write(images.resolve(name), (driver as TakesScreenshot).getScreenshotAs(OutputType.BYTES))
    }

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

    @Test
    @Order(3)
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
    @Order(4)
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
    @Order(5)
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
    @Order(6)
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
