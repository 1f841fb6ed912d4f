package dev.trellis.studio

import org.junit.jupiter.api.Assumptions.assumeTrue
import org.openqa.selenium.By
import org.openqa.selenium.JavascriptExecutor
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
 * A real headless Chromium (Debian's `chromium` and `chromium-driver`) driven through WebDriver, for the browser
 * tests. Without Chromium the test is skipped, except on CI (`CI` set), where it fails.
 *
 * With `-Dtrellis.studio.screenshots=<directory>`, [screenshot] writes the page there (the screenshots of
 * `docs/studio.md`); without it, it writes nothing.
 */
class Chromium : AutoCloseable {
    private val profile: Path = Files.createTempDirectory("studio-chromium")
    val driver: WebDriver

    init {
        val chromium = listOf("/usr/bin/chromium", "/usr/bin/chromium-browser").map(::File)
            .firstOrNull { it.canExecute() }
        val chromedriver = listOf("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver").map(::File)
            .firstOrNull { it.canExecute() }
        if (chromium == null || chromedriver == null) {
            profile.toFile().deleteRecursively()
            check(System.getenv("CI") == null) {
                "Chromium or chromedriver is missing on CI: install them (apt-get install -y chromium chromium-driver)."
            }
            assumeTrue(false, "Browser tests skipped: install chromium and chromium-driver to run them.")
        }
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
    }

    fun wait(seconds: Long = 60): WebDriverWait = WebDriverWait(driver, Duration.ofSeconds(seconds))

    fun waitFor(css: String) = wait().until(ExpectedConditions.presenceOfElementLocated(By.cssSelector(css)))!!

    fun all(css: String) = driver.findElements(By.cssSelector(css))!!

    /** Writes a screenshot of the page as [name] when screenshots were asked for, scrolled to [at] when given. */
    fun screenshot(name: String, at: String? = null) {
        val images = images ?: return
        Files.createDirectories(images)
        if (at != null) {
            (driver as JavascriptExecutor).executeScript("document.querySelector(arguments[0]).scrollIntoView()", at)
        }
        Files.write(images.resolve(name), (driver as TakesScreenshot).getScreenshotAs(OutputType.BYTES))
    }

    override fun close() {
        driver.quit()
        profile.toFile().deleteRecursively()
    }

    private companion object {
        val images: Path? = System.getProperty("trellis.studio.screenshots")?.ifBlank { null }
            ?.let { Path.of(it).toAbsolutePath() }
    }
}
