package dev.trellis.samples

import com.github.ajalt.clikt.core.CliktCommand
import com.github.ajalt.clikt.core.Context
import com.github.ajalt.clikt.core.ProgramResult
import com.github.ajalt.clikt.parameters.arguments.argument
import com.github.ajalt.clikt.parameters.options.default
import com.github.ajalt.clikt.parameters.options.option
import com.github.ajalt.clikt.parameters.types.choice
import com.github.ajalt.clikt.parameters.types.double
import com.github.ajalt.clikt.parameters.types.int
import com.github.ajalt.clikt.parameters.types.path
import dev.trellis.test.eval.EvalComparison
import dev.trellis.test.eval.EvalReport
import kotlinx.coroutines.runBlocking
import java.nio.file.Files
import java.nio.file.Path

/**
 * `trellis-samples eval research [--model scripted|openai] [--out DIR] [--concurrency N] [--threshold RATE]
 * [--baseline REPORT.json]`: runs the research sample's eval set, prints its table, writes the report as JSON and
 * HTML, compares it with a baseline report, and exits with 1 when the pass rate is below the threshold.
 */
internal class EvalCommand(private val env: (String) -> String? = System::getenv) : CliktCommand(name = "eval") {
    private val set by argument(help = "The eval set to run: research.").choice("research")
    private val model by option("--model", help = "scripted (no network) or openai (the OPENAI_* variables).")
        .choice(*ResearchModels.names.toTypedArray()).default("scripted")
    private val out by option("--out", metavar = "DIR", help = "Where the reports go (default: target/evals).")
        .path().default(Path.of("target", "evals"))
    private val concurrency by option("--concurrency", help = "Cases run at a time (default 4).").int().default(4)
    private val threshold by option("--threshold", help = "The lowest pass rate that passes, 0 to 1 (default 1.0).")
        .double().default(1.0)
    private val baseline by option("--baseline", metavar = "FILE", help = "A previous JSON report to compare with.")
        .path(mustExist = true)

    override fun help(context: Context): String = "Runs a sample's eval set and reports each case's scores."

    override fun run() {
        val models = ResearchModels.named(model, env)
        echo("Eval '$set' on ${models.name}: ${ResearchEval.set().cases.size} cases, $concurrency at a time")
        val report = runBlocking { ResearchEval.evaluation(models, concurrency).evaluate() }
        echo(report.toTable())
        Files.createDirectories(out)
        val json = report.writeJson(out.resolve("$set-report.json"))
        val html = report.writeHtml(out.resolve("$set-report.html"))
        echo("Reports written to $json and $html")
        baseline?.let { echo(EvalComparison.of(EvalReport.readJson(it), report).toTable()) }
        if (report.passRate < threshold) {
            echo(
                "Pass rate ${"%.0f%%".format(
                    report.passRate * 100,
                )} is below the threshold of ${"%.0f%%".format(threshold * 100)}.",
                err = true,
            )
            throw ProgramResult(1)
        }
    }
}
