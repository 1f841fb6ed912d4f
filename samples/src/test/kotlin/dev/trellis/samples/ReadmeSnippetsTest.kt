package dev.trellis.samples

import dev.trellis.samples.readme.JavaQuickstart
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import dev.trellis.samples.readme.budgets.main as budgetsMain
import dev.trellis.samples.readme.caching.main as cachingMain
import dev.trellis.samples.readme.compensation.main as compensationMain
import dev.trellis.samples.readme.composition.main as compositionMain
import dev.trellis.samples.readme.durable.main as durableMain
import dev.trellis.samples.readme.fallback.main as fallbackMain
import dev.trellis.samples.readme.policies.main as policiesMain
import dev.trellis.samples.readme.quickstart.main as quickstartMain
import dev.trellis.samples.readme.routing.main as routingMain

/**
 * The README's Kotlin and Java blocks are complete files: each is one of the `readme` sources of these tests,
 * verbatim but for the package line, so they compile as written; here they are run and their output checked.
 */
class ReadmeSnippetsTest {
    private val module = Path.of("").toAbsolutePath()
    private val readme = Files.readString(module.resolveSibling("README.md"))

    /** The text of the README's ```[language] blocks, in order. */
    private fun blocks(language: String): List<String> =
        Regex("^```$language\\n(.*?)^```$", setOf(RegexOption.MULTILINE, RegexOption.DOT_MATCHES_ALL))
            .findAll(readme)
            .map { it.groupValues[1] }
            .toList()

    /** A test source file as the README shows it: without its package line and the blank line after it. */
    private fun snippet(path: String): String {
        val text = Files.readString(module.resolve("src/test").resolve(path))
        text shouldStartWith "package "
        return text.substringAfter("\n").removePrefix("\n")
    }

    /** Runs [block] and returns what it printed on System.out, line by line. */
    private fun printed(block: () -> Unit): List<String> {
        val buffer = ByteArrayOutputStream()
        val original = System.out
        System.setOut(PrintStream(buffer, true, Charsets.UTF_8))
        try {
            block()
        } finally {
            System.setOut(original)
        }
        return buffer.toString(Charsets.UTF_8).lines().dropLastWhile { it.isEmpty() }
    }

    @AfterEach
    fun removeTheDurableSnippetsDatabase() {
        for (suffix in listOf("", "-wal", "-shm")) Files.deleteIfExists(module.resolve("runs.db$suffix"))
    }

    @Test
    fun `every Kotlin and Java block of the README is a compiled source file, verbatim`() {
        blocks("kotlin") shouldContainExactly listOf(
            snippet("kotlin/dev/trellis/samples/readme/quickstart/Research.kt"),
            snippet("kotlin/dev/trellis/samples/readme/durable/Shipping.kt"),
            snippet("kotlin/dev/trellis/samples/readme/composition/Composition.kt"),
            snippet("kotlin/dev/trellis/samples/readme/policies/Metering.kt"),
            snippet("kotlin/dev/trellis/samples/readme/routing/Triage.kt"),
            snippet("kotlin/dev/trellis/samples/readme/fallback/Fallback.kt"),
            snippet("kotlin/dev/trellis/samples/readme/caching/Caching.kt"),
            snippet("kotlin/dev/trellis/samples/readme/budgets/Budgets.kt"),
            snippet("kotlin/dev/trellis/samples/readme/compensation/Compensation.kt"),
        )
        blocks("java") shouldContainExactly listOf(snippet("java/dev/trellis/samples/readme/JavaQuickstart.java"))
    }

    @Test
    fun `the Kotlin example loops to three drafts, then streams a second run's events`() {
        val lines = printed { quickstartMain() }
        lines.first() shouldBe "COMPLETED after 3 drafts"
        lines[1] shouldStartWith "RunStarted("
        lines.last() shouldStartWith "RunCompleted("
    }

    @Test
    fun `the durable example pauses on its interrupt, resumes with the answer, and runs again on the same database`() {
        repeat(2) {
            printed { durableMain() } shouldContainExactly listOf(
                "INTERRUPTED: Ship 42 books?",
                "COMPLETED: shipped = true",
            )
        }
    }

    @Test
    fun `the composition example maps a subgraph over three topics in task order, then runs it once as a subgraph`() {
        printed { compositionMain() } shouldContainExactly listOf(
            "[NOTES ON LIGHT, NOTES ON AIR, NOTES ON EYES]",
            "NOTES ON THE SKY",
            "air",
        )
    }

    @Test
    fun `the budget example stops the loop at the draft that went over the usd budget`() {
        printed { budgetsMain() } shouldContainExactly listOf(
            "usd over 0.1 at 0.12, by draft",
            "{tokens=4800.0, usd=0.12}",
        )
    }

    @Test
    fun `the policies example redacts what its node wrote and meters it around the node`() {
        printed { policiesMain() } shouldContainExactly listOf(
            "Call me at *** about: the invoice",
            "metered 33 characters",
        )
    }

    @Test
    fun `the routing example sends each ticket to the first queue whose condition holds, else to a human`() {
        printed { routingMain() } shouldContainExactly listOf("outage", "billing", "human")
    }

    @Test
    fun `the error route example falls back to the cached answer after three attempts`() {
        printed { fallbackMain() } shouldContainExactly listOf(
            "COMPLETED: cached answer (web failed 3 times: search API is down)",
        )
    }

    @Test
    fun `the caching example runs its node once for two runs`() {
        printed { cachingMain() } shouldContainExactly listOf(
            "sunny in Oslo",
            "sunny in Oslo",
            "fetched 1 time(s)",
        )
    }

    @Test
    fun `the compensation example undoes the booking when the payment fails`() {
        printed { compensationMain() } shouldContainExactly listOf(
            "cancel hotel-42",
            "card declined: [CompensationResult(book#1, COMPLETED)]",
        )
    }

    @Test
    fun `the Java example runs to three rounds, then subscribes to a second run's events`() {
        val lines = printed { JavaQuickstart.main(emptyArray()) }
        lines.first() shouldBe "COMPLETED after 3 rounds"
        lines[1] shouldStartWith "RunStarted("
        lines.last() shouldStartWith "RunCompleted("
    }
}
