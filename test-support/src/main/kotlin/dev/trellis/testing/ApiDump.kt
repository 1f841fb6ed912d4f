package dev.trellis.testing

import org.jetbrains.kotlin.abi.tools.AbiFilters
import org.jetbrains.kotlin.abi.tools.AbiTools
import java.io.File

/**
 * Checks a module's public API against its checked-in dump `api/<module>.api`, so that every change of
 * the public API shows up in review.
 *
 * Run the tests with `-Dtrellis.apiDump.update=true` to rewrite the dump after a deliberate change
 * (and add a line to `CHANGELOG.md`).
 */
public object ApiDump {
    /** The markers of APIs Trellis modules share with each other: not part of a module's public API. */
    private val INTERNAL_APIS = setOf("dev.trellis.graph.InternalTrellisApi", "dev.trellis.checkpoint.InternalStoreApi")

    /** Dumps `target/classes` of the module in the working directory and compares it with the checked-in dump. */
    public fun check(moduleDir: File = File(".").absoluteFile) {
        val classes = File(moduleDir, "target/classes")
        check(classes.isDirectory) { "No compiled classes at $classes; run the build before the API dump check." }
        val dumpFile = File(moduleDir, "api/${moduleDir.canonicalFile.name}.api")
        val actual = dump(classes)
        val update = System.getProperty("trellis.apiDump.update") == "true"
        if (update) {
            dumpFile.parentFile.mkdirs()
            dumpFile.writeText(actual)
            return
        }
        check(dumpFile.isFile) {
            "No API dump at $dumpFile. Create it with: ./mvnw test -Dtrellis.apiDump.update=true, then review and commit it."
        }
        val expected = dumpFile.readText()
        if (expected != actual) {
            val diff = lineDiff(expected, actual)
            throw AssertionError(
                "The public API of ${moduleDir.canonicalFile.name} differs from $dumpFile:\n$diff\n" +
                    "If the change is deliberate, run ./mvnw test -Dtrellis.apiDump.update=true, " +
                    "commit the new dump and add a line to CHANGELOG.md.",
            )
        }
    }

    /**
     * The public API of the compiled classes under [classes], in the dump's format: what Java and Kotlin callers of
     * the jar see (Kotlin `internal` declarations and `@InternalTrellisApi` ones left out).
     */
    public fun dump(classes: File): String {
        val files = classes.walkTopDown().filter { it.isFile && it.extension == "class" }.sortedBy { it.path }.toList()
        val filters = AbiFilters(emptySet(), emptySet(), emptySet(), INTERNAL_APIS)
        val out = StringBuilder()
        AbiTools.getInstance().printJvmDump(out, files, filters)
        return out.toString()
    }

    private fun lineDiff(expected: String, actual: String): String {
        val before = expected.lines().toSet()
        val after = actual.lines().toSet()
        val removed = expected.lines().filter { it !in after }.map { "- $it" }
        val added = actual.lines().filter { it !in before }.map { "+ $it" }
        return (removed + added).joinToString("\n")
    }
}
