package dev.trellis.test.guide

import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path

/**
 * The test kit's examples in `docs/testing.md` are this module's guide tests as written: each block marked
 * `<!-- kit:<path> -->` shows the file at that path of trellis-test, minus its package line.
 */
class GuideSnippetsTest {
    @Test
    fun `the guide's test kit examples are the guide tests`() {
        val guide = Files.readString(Path.of("../docs/testing.md"))
        val blocks = Regex(
            "<!-- kit:(\\S+) -->\\n```\\w+\\n(.*?)```",
            RegexOption.DOT_MATCHES_ALL,
        ).findAll(guide).toList()
        blocks.map { it.groupValues[1].substringAfterLast('/') } shouldContainAll listOf(
            "TriageGuideTest.kt",
            "TriageGuideJavaTest.java",
            "ReplayGuideTest.kt",
            "ReplayGuideJavaTest.java",
            "EvalGuideTest.kt",
            "EvalGuideJavaTest.java",
        )
        for (block in blocks) {
            val (path, shown) = block.destructured
            val source = Files.readString(Path.of(path))
            withClue("docs/testing.md shows $path: copy the file (without its package line) into the guide") {
                shown shouldBe source.substringAfter("\n").trimStart('\n')
            }
        }
    }
}
