package dev.trellis.samples

import com.github.ajalt.clikt.core.parse
import dev.trellis.test.eval.EvalReport
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path

/** The research sample's eval set on the scripted models, as CI runs it. */
class ResearchEvalTest {
    @Test
    fun `every case of the research eval set passes on the scripted models`() = runTest {
        val report = ResearchEval.evaluation(ResearchModels.scripted()).evaluate()
        (report.cases.size >= 10) shouldBe true
        report.assertPassRate(1.0)
        report.case("news-down").scores.getValue("trajectory").passed shouldBe true
        report.cases.all { it.cost > 0 } shouldBe true
    }

    @Test
    fun `the eval command prints the table and writes the JSON and HTML reports`(
        @TempDir dir: Path,
    ) {
        val out = dir.resolve("evals")
        val command = EvalCommand { null }
        command.parse(arrayOf("research", "--out", out.toString(), "--concurrency", "3"))
        val report = EvalReport.readJson(out.resolve("research-report.json"))
        report.passRate shouldBe 1.0
        Files.readString(out.resolve("research-report.html")) shouldContain "<iframe srcdoc="
    }
}
