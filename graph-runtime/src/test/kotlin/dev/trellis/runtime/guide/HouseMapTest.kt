package dev.trellis.runtime.guide

import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldContainAll
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.extension
import kotlin.io.path.isDirectory
import kotlin.io.path.name
import kotlin.io.path.readLines

/**
 * The map of the house in CONTRIBUTING.md cannot rot: every path it names exists, every module of the build has its
 * row, each file of its concept table opens with a comment (what it owns), every package of the main sources has its
 * overview (`Package.kt`), and no package is in two modules.
 */
class HouseMapTest {
    private val root: Path = Path.of("").toAbsolutePath().parent
    private val map: String = Files.readString(root.resolve("CONTRIBUTING.md"))

    /** The repository paths the map names: in backticks (one word with a slash) and as Markdown links. */
    private fun namedPaths(): Set<String> {
        val quoted = Regex("`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?)`").findAll(map).map { it.groupValues[1] }
        val linked = Regex("]\\(([^)#:]+)\\)").findAll(map).map { it.groupValues[1] }
        return (quoted + linked).toSet()
    }

    @Test
    fun `every path the map names exists`() {
        val paths = namedPaths()
        paths.filter { it.contains("/src/") }.size shouldBeAtLeast 15
        paths.filterNot { Files.exists(root.resolve(it)) }.shouldBeEmpty()
    }

    @Test
    fun `every module of the build has its row in the map`() {
        val pom = Files.readString(root.resolve("pom.xml"))
        val modules = Regex("<module>([^<]+)</module>").findAll(pom).map { it.groupValues[1] }.toList()
        val table = map.substringAfter("### Modules").substringBefore("\n#")
        val rows = Regex("^\\| `([^`]+)` \\|", RegexOption.MULTILINE).findAll(table).map { it.groupValues[1] }.toSet()
        modules.filterNot { it in rows }.shouldBeEmpty()
    }

    /** The rows of the table under "Where each concept lives": concept to file. */
    private fun concepts(): Map<String, String> {
        val section = map.substringAfter("### Where each concept lives").substringBefore("\n#")
        return Regex("^\\| ([^|`]+?) \\| `([^`]+)` \\|", RegexOption.MULTILINE).findAll(section)
            .associate { it.groupValues[1] to it.groupValues[2] }
    }

    @Test
    fun `the map names the file of each concept, and each opens with a comment`() {
        val concepts = concepts()
        concepts.keys shouldContainAll CONCEPTS
        val silent = concepts.values.filterNot { opensWithComment(root.resolve(it)) }
        silent.shouldBeEmpty()
    }

    /** Whether the first line after the file's package line and imports (and file annotations) starts a comment. */
    private fun opensWithComment(file: Path): Boolean {
        val first = file.readLines().map { it.trim() }.firstOrNull {
            it.isNotEmpty() && !it.startsWith("package ") && !it.startsWith("import ") && !it.startsWith("@file:")
        } ?: return false
        return first.startsWith("/*") || first.startsWith("//")
    }

    @Test
    fun `every package of the main sources has its overview`() {
        val missing = modules().flatMap { module ->
            packagesOf(module).filter { pkg ->
                !Files.exists(module.resolve("src/main/kotlin").resolve(pkg).resolve("Package.kt"))
            }.map { "${module.name}: $it" }
        }
        missing.shouldBeEmpty()
    }

    /**
     * No package of the main sources is in two modules: on the module path two modules may not hold one package (the
     * JVM refuses to start), and a shared package hides which artifact a class comes from.
     */
    @Test
    fun `no package is in two modules`() {
        val split = modules()
            .flatMap { module -> packagesOf(module).map { it to module.name } }
            .groupBy({ it.first }, { it.second })
            .filterValues { it.size > 1 }
            .map { (pkg, modules) -> "${pkg.replace('/', '.')} is in ${modules.sorted().joinToString(" and ")}" }
        withClue("Give each module its own packages (rename the package of one of them):") { split.shouldBeEmpty() }
    }

    @Test
    fun `the split-package check sees the packages of every module`() {
        val packages = modules().associate { it.name to packagesOf(it) }
        packages["trellis-langchain4j"]!! shouldContain "dev/trellis/langchain4j"
        packages["trellis-mcp"]!! shouldContain "dev/trellis/mcp"
        packages["java-facade"]!! shouldContain "dev/trellis/javaapi"
    }

    private fun modules(): List<Path> = Files.list(root).use { entries ->
        entries.filter { it.resolve("pom.xml").let(Files::exists) && it.resolve("src/main").isDirectory() }.toList()
    }

    /** The package folders (relative paths) of [module]'s Kotlin and Java main sources that hold a source file. */
    private fun packagesOf(module: Path): Set<String> = listOf("kotlin", "java").flatMap { language ->
        val sources = module.resolve("src/main").resolve(language)
        if (!sources.isDirectory()) return@flatMap emptyList()
        Files.walk(sources).use { files ->
            files.filter { it.extension == "kt" || it.extension == "java" }
                .map { sources.relativize(it.parent).toString() }
                .toList()
        }
    }.toSet()

    private infix fun Int.shouldBeAtLeast(least: Int) {
        check(this >= least) { "The map names $this source paths; expected at least $least." }
    }

    private companion object {
        /** The concepts a newcomer looks for first; the map must name the file of each. */
        val CONCEPTS = listOf(
            "scheduler readiness rule",
            "retry",
            "timeout",
            "checkpoint write",
            "lease renewal",
            "fork",
            "interrupt",
            "map task",
            "subgraph call",
            "compensation",
            "budget",
            "node cache",
            "event delivery",
            "Java node body",
            "fleet claim",
        )
    }
}
