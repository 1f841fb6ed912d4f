@file:JvmName("TrellisSamples")

package dev.trellis.samples

import com.github.ajalt.clikt.core.CliktCommand
import com.github.ajalt.clikt.core.CliktError
import com.github.ajalt.clikt.core.Context
import com.github.ajalt.clikt.core.ProgramResult
import com.github.ajalt.clikt.core.parse
import com.github.ajalt.clikt.parameters.arguments.argument
import com.github.ajalt.clikt.parameters.arguments.default
import com.github.ajalt.clikt.parameters.options.default
import com.github.ajalt.clikt.parameters.options.flag
import com.github.ajalt.clikt.parameters.options.option
import com.github.ajalt.clikt.parameters.types.choice
import com.github.ajalt.clikt.parameters.types.path
import com.github.ajalt.mordant.terminal.Terminal
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.TimeSource

/**
 * `trellis-samples [--json] [--list] [--model scripted|openai] [--spec FILE] [sample]`; [env] reads the environment (the
 * `OPENAI_*` variables of `--model openai`).
 */
internal class SamplesCommand(
    private val env: (String) -> String? = System::getenv,
) : CliktCommand(name = "trellis-samples") {
    private val json by option("--json", help = "Print the raw events as JSON lines (one object per event).").flag()
    private val list by option("--list", help = "List the samples and exit.").flag()
    private val interactive by option(
        "--interactive",
        help = "Answer the samples' interrupts on stdin (without it, samples run to completion unattended).",
    ).flag()
    private val timeline by option(
        "--timeline",
        metavar = "FILE",
        help = "Write each run as a self-contained HTML timeline page (FILE, then FILE-2.html, ... for more runs).",
    ).path()
    private val model by option(
        "--model",
        help = "The models that plan, write and review in the research sample: scripted (no network) or openai " +
            "(an OpenAI-compatible endpoint: ${ResearchModels.API_KEY}, ${ResearchModels.MODEL}, optionally " +
            "${ResearchModels.BASE_URL}).",
    ).choice(*ResearchModels.names.toTypedArray()).default("scripted")
    private val spec by option(
        "--spec",
        metavar = "FILE",
        help = "Load the research sample's graph from a YAML or JSON graph spec (docs/graph-spec.md) instead of the " +
            "Kotlin DSL; the sample's own is samples/src/main/resources/dev/trellis/samples/research.yaml.",
    ).path(mustExist = true, canBeDir = false)
    private val sample by argument(help = "The sample to run (default: ${Samples.DEFAULT}); see --list.")
        .choice(*Samples.all.map { it.name }.toTypedArray())
        .default(Samples.DEFAULT)

    override fun help(context: Context): String =
        "Runs a Trellis sample graph and shows its events live, then a summary. Exits with status 1 when a run ends " +
            "FAILED or CANCELLED (other than the cancellation sample's, which cancels on purpose).\n\n" +
            "Also: trellis-samples ${FleetSampleCommand.USAGE}: ${FleetSampleCommand.DESCRIPTION} " +
            "(trellis-samples fleet --help); trellis-samples studio: the samples' runs in Trellis Studio " +
            "(trellis-samples studio --help); trellis-samples eval research: the research sample's eval set " +
            "(trellis-samples eval --help)."

    override fun run() {
        val terminal = Terminal()
        if (list) {
            for (s in Samples.all) terminal.println("${s.name.padEnd(14)} ${s.description}")
            terminal.println("${"fleet".padEnd(14)} ${FleetSampleCommand.DESCRIPTION}; needs PostgreSQL")
            terminal.println("${"".padEnd(14)} ${FleetSampleCommand.USAGE}")
            terminal.println("${"studio".padEnd(14)} the samples' runs (or a store's, --store) in Trellis Studio")
            terminal.println("${"eval".padEnd(14)} a sample's eval set and its report: trellis-samples eval research")
            return
        }
        val chosen = Samples.named(sample)!!
        val start = TimeSource.Monotonic.markNow()
        val models = ResearchModels.named(model, env) // fails naming the variables --model openai lacks
        val otel = SampleTelemetry.fromEnvironment()
        val context = SampleContext(
            ask = if (interactive) askOnStdin(terminal, json) else null,
            telemetry = otel?.telemetry,
            models = models,
            spec = spec,
        )
        val pages = timeline?.let { TimelinePages(it) }
        val outcome = otel.use { runSample(terminal, chosen, context, pages, start) }
        val unsuccessful = outcome.unsuccessful
        if (unsuccessful.isNotEmpty()) {
            for (result in unsuccessful) {
                val error = result.error?.message?.let { ": $it" } ?: ""
                System.err.println(
                    "trellis-samples: run ${result.runId} of '${result.graphId}' ended ${result.status}$error",
                )
            }
            throw ProgramResult(1)
        }
    }

    private fun runSample(
        terminal: Terminal,
        chosen: Sample,
        context: SampleContext,
        pages: TimelinePages?,
        start: TimeSource.Monotonic.ValueTimeMark,
    ): SampleOutcome =
        runBlocking {
            if (json) {
                val outcome = chosen.run(context) { event ->
                    pages?.record(event)
                    println(event.toJson())
                }
                pages?.write(outcome, context)
                return@runBlocking outcome
            }
            terminal.println("Sample '${chosen.name}': ${chosen.description}")
            val view = ConsoleView(terminal, live = terminal.terminalInfo.interactive && !interactive)
            val ticker = launch {
                while (true) {
                    delay(100.milliseconds)
                    view.tick()
                }
            }
            val outcome = try {
                chosen.run(context) { event ->
                    pages?.record(event)
                    view.onEvent(event)
                }
            } finally {
                ticker.cancel()
                view.close()
            }
            terminal.printSummary(outcome, start.elapsedNow())
            pages?.write(outcome, context)?.forEach { terminal.println("Timeline written to $it") }
            outcome
        }
}

/** Runs the samples' command line. */
public fun main(args: Array<String>) {
    val command = when (args.firstOrNull()) {
        "fleet" -> FleetSampleCommand()
        "eval" -> EvalCommand()
        "studio" -> StudioCommand()
        else -> SamplesCommand()
    }
    val rest = if (command is SamplesCommand) args else args.drop(1).toTypedArray()
    try {
        command.parse(rest)
    } catch (e: ProgramResult) {
        exitProcess(e.statusCode)
    } catch (e: CliktError) {
        command.echoFormattedHelp(e)
        if (e.statusCode != 0) exitProcess(e.statusCode)
    }
}
