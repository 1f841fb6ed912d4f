package dev.trellis.samples

import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.extension
import kotlin.io.path.invariantSeparatorsPathString
import kotlin.io.path.name
import kotlin.streams.asSequence

/**
 * Every ```kotlin and ```java block of README.md and the docs folder is compiled: it appears, line by line, as a
 * contiguous run of lines of some test source file of the repository (a `.kt` or `.java` file under a module's
 * `src/test`), which the build compiles. Lines are compared with their leading (and trailing) whitespace trimmed,
 * and blank lines are ignored, so a block may sit indented inside a test function — where the test runs it and checks
 * what it claims.
 */
class DocBlocksCompiledTest {
    private val root: Path = Path.of("").toAbsolutePath().parent

    /** One fenced block: the doc it is in, the line its code starts on (from 1), its language and its lines. */
    data class Block(val doc: String, val line: Int, val language: String, val lines: List<String>)

    private fun docs(): List<Path> {
        val docs = Files.list(root.resolve("docs")).use { files ->
            files.asSequence().filter { it.extension == "md" }.sorted().toList()
        }
        return listOf(root.resolve("README.md")) + docs
    }

    private fun relative(path: Path): String = root.relativize(path).invariantSeparatorsPathString

    /** The ```kotlin and ```java blocks of [doc], in order. */
    private fun blocks(doc: Path): List<Block> {
        val lines = Files.readAllLines(doc)
        val blocks = ArrayList<Block>()
        var i = 0
        while (i < lines.size) {
            val language = Regex("^```(kotlin|java)\\s*$").find(lines[i])?.groupValues?.get(1)
            if (language == null) {
                i++
                continue
            }
            val end = (i + 1 until lines.size).firstOrNull { lines[it].trimStart().startsWith("```") } ?: lines.size
            blocks += Block(relative(doc), i + 2, language, lines.subList(i + 1, end))
            i = end + 1
        }
        return blocks
    }

    /** A text as compared: each line without its leading whitespace, blank lines left out. */
    private fun normalized(lines: List<String>): List<String> = lines.map { it.trim() }.filter { it.isNotEmpty() }

    /** Every test source of every module, normalized. */
    private val sources: List<List<String>> by lazy {
        Files.list(root).use { modules -> modules.asSequence().toList() }
            .map { it.resolve("src/test") }
            .filter { Files.isDirectory(it) }
            .flatMap { tests ->
                Files.walk(tests).use { files ->
                    files.asSequence().filter { it.name.endsWith(".kt") || it.name.endsWith(".java") }.toList()
                }
            }
            .map { normalized(Files.readAllLines(it)) }
    }

    private fun compiled(block: Block): Boolean {
        val wanted = normalized(block.lines)
        if (wanted.isEmpty()) return true
        return sources.any { source -> contains(source, wanted) }
    }

    private fun contains(source: List<String>, run: List<String>): Boolean {
        for (start in 0..source.size - run.size) {
            if (source[start] == run[0] && source.subList(start, start + run.size) == run) return true
        }
        return false
    }

    @Test
    fun `every Kotlin and Java block of the README and the docs is compiled test source`() {
        val missing = docs()
            .flatMap { blocks(it) }
            .filterNot { compiled(it) }
            .map { "${it.doc}:${it.line} (```${it.language}) ${it.lines.first { l -> l.isNotBlank() }.trim()}" }
        withClue(
            "These blocks appear in no test source (a .kt or .java file under a module's src/test), compared " +
                "line by line without leading whitespace or blank lines. Put each in a test that runs it, or fix " +
                "the doc to show what a test runs:\n" +
                missing.joinToString("\n"),
        ) {
            missing.shouldBeEmpty()
        }
    }

    @Test
    fun `a block is found only as a contiguous run of lines`() {
        val source = listOf("val a = 1", "val b = 2", "println(a + b)")
        contains(source, listOf("val a = 1", "val b = 2")) shouldBe true
        contains(source, listOf("val a = 1", "println(a + b)")) shouldBe false
        normalized(listOf("    val a = 1", "", "  val b = 2  ")) shouldBe listOf("val a = 1", "val b = 2")
    }
}
