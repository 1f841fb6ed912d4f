package dev.trellis.studio

import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import org.junit.jupiter.api.Test
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import dev.trellis.studio.docs.main as quickstart

/**
 * `docs/studio.md`'s Kotlin and Java blocks are complete files, the `docs` sources of these tests verbatim but for the
 * package line: they compile as written, and the Kotlin one is run here (the Java one by `JavaStudioTest`).
 */
class StudioDocsTest {
    private val module = Path.of("").toAbsolutePath()
    private val doc = Files.readString(module.resolveSibling("docs").resolve("studio.md"))

    private fun block(language: String): String =
        Regex("^```$language\\n(.*?)^```$", setOf(RegexOption.MULTILINE, RegexOption.DOT_MATCHES_ALL))
            .findAll(doc).map { it.groupValues[1] }.single()

    private fun snippet(path: String): String {
        val text = Files.readString(module.resolve("src/test").resolve(path))
        return text.substringAfter("\n\n")
    }

    @Test
    fun `the doc's Kotlin and Java blocks are the compiled snippets`() {
        block("kotlin") shouldBe snippet("kotlin/dev/trellis/studio/docs/StudioQuickstart.kt")
        block("java") shouldBe snippet("java/dev/trellis/studio/docs/JavaStudioQuickstart.java")
    }

    @Test
    fun `the Kotlin snippet starts a studio and prints its address`() {
        val out = ByteArrayOutputStream()
        val old = System.out
        System.setOut(PrintStream(out, true))
        try {
            quickstart()
        } finally {
            System.setOut(old)
        }
        out.toString().trim() shouldStartWith "Trellis Studio at http://127.0.0.1:"
    }
}
