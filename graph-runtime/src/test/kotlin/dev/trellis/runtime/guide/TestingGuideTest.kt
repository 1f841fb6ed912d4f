package dev.trellis.runtime.guide

import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path

/** The example of `docs/testing.md` is [SupportGraphTest] as written: the guide shows that file, minus its package line. */
class TestingGuideTest {
    @Test
    fun `the guide's example is SupportGraphTest`() {
        val guide = Files.readString(Path.of("../docs/testing.md"))
        val marker = "<!-- guide:SupportGraphTest -->\n```kotlin\n"
        val start = guide.indexOf(marker)
        withClue("docs/testing.md marks its example with $marker") { (start >= 0) shouldBe true }
        val shown = guide.substring(start + marker.length, guide.indexOf("```", start + marker.length))
        val source = Files.readString(Path.of("src/test/kotlin/dev/trellis/runtime/guide/SupportGraphTest.kt"))
        val example = source.substringAfter("\n").trimStart('\n')
        withClue(
            "docs/testing.md and SupportGraphTest.kt differ: copy the test file (without its package line) into the guide",
        ) {
            shown shouldBe example
        }
    }
}
