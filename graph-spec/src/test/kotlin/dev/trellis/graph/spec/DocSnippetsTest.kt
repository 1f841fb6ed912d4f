package dev.trellis.graph.spec

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import dev.trellis.graph.spec.docs.main as kotlinDraft

/** The Kotlin, Java and YAML blocks of docs/graph-spec.md are test sources, verbatim but for the package line. */
class DocSnippetsTest : FunSpec({
    val module = Path.of("").toAbsolutePath()
    val doc = Files.readString(module.resolveSibling("docs/graph-spec.md"))
    val draft = module.resolve("src/test/resources/specs/draft.yaml")

    fun blocks(language: String): List<String> =
        Regex("^```$language\\n(.*?)^```$", setOf(RegexOption.MULTILINE, RegexOption.DOT_MATCHES_ALL))
            .findAll(doc).map { it.groupValues[1] }.toList()

    fun snippet(path: String): String {
        val text = Files.readString(module.resolve("src/test").resolve(path))
        text shouldStartWith "package "
        return text.substringAfter("\n").removePrefix("\n")
    }

    fun printed(block: () -> Unit): List<String> {
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

    test("every Kotlin, Java and YAML block of docs/graph-spec.md is a test source, verbatim") {
        blocks("kotlin") shouldContainExactly listOf(snippet("kotlin/dev/trellis/graph/spec/docs/Draft.kt"))
        blocks("java") shouldContainExactly listOf(snippet("java/dev/trellis/graph/spec/docs/JavaDraft.java"))
        blocks("yaml") shouldContainExactly listOf(Files.readString(draft))
    }

    test("the Kotlin and the Java example print the same") {
        val expected = listOf("Draft 3 about the sky", "format: 1")
        printed { kotlinDraft(arrayOf(draft.toString())) } shouldBe expected
        // The Java example is compiled after this Kotlin test; it is called by name.
        val javaMain = Class.forName(
            "dev.trellis.graph.spec.docs.JavaDraft",
        ).getMethod("main", Array<String>::class.java)
        printed { javaMain.invoke(null, arrayOf(draft.toString())) } shouldBe expected
    }
})
