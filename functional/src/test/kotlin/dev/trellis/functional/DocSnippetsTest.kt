package dev.trellis.functional

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.functional.docs.write
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import java.nio.file.Files
import java.nio.file.Path

/** The Kotlin block of docs/functional.md is a test source, verbatim but for the package line, and it runs. */
class DocSnippetsTest : FunSpec({
    test("the example of docs/functional.md is compiled and runs") {
        val module = Path.of("").toAbsolutePath()
        val doc = Files.readString(module.resolveSibling("docs/functional.md"))
        val blocks = Regex("^```kotlin\\n(.*?)^```$", setOf(RegexOption.MULTILINE, RegexOption.DOT_MATCHES_ALL))
            .findAll(doc).map { it.groupValues[1] }.toList()
        val source = Files.readString(module.resolve("src/test/kotlin/dev/trellis/functional/docs/Report.kt"))
        blocks shouldContainExactly listOf(source.substringAfter("\n").removePrefix("\n"))
        write(InMemoryCheckpointStore()) shouldBe "findings on the sky: causes; findings on the sky: effects"
    }
})
