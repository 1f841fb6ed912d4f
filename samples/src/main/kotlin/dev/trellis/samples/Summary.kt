package dev.trellis.samples

import com.github.ajalt.mordant.rendering.TextColors.green
import com.github.ajalt.mordant.rendering.TextColors.magenta
import com.github.ajalt.mordant.rendering.TextColors.red
import com.github.ajalt.mordant.rendering.TextColors.yellow
import com.github.ajalt.mordant.rendering.TextStyles.bold
import com.github.ajalt.mordant.table.table
import com.github.ajalt.mordant.terminal.Terminal
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import kotlin.time.Duration

/** Prints what a sample did: per run, its final state and a table of its nodes; then notes and the total time. */
internal fun Terminal.printSummary(outcome: SampleOutcome, total: Duration) {
    println()
    for (result in outcome.results) {
        println(
            bold("Run ${result.runId.take(8)} of '${result.graphId}': ") + status(result.status) +
                " in ${result.duration.toMillis()} ms",
        )
        result.error?.let { println(red("  error: ${it.message}")) }
        println(
            table {
                header { row("state key", "final value") }
                body { for ((key, value) in result.state.toMap()) row(key, value.toString().abbreviate()) }
            },
        )
        println(nodeTable(result))
    }
    for (note in outcome.notes) println("• $note")
    println(bold("Total time: ${total.inWholeMilliseconds} ms"))
}

private fun nodeTable(result: RunResult) = table {
    header { row("node", "status", "executions", "attempts", "time") }
    body {
        for (node in result.nodes.values) {
            row(node.nodeId, status(node.status), node.executions, node.attempts, "${node.duration.toMillis()} ms")
        }
    }
}

private fun status(status: Status): String = when (status) {
    Status.COMPLETED -> green(status.name)
    Status.FAILED -> red(status.name)
    Status.CANCELLED -> magenta(status.name)
    Status.PENDING -> status.name
    else -> yellow(status.name)
}

private fun String.abbreviate(max: Int = 48) = if (length <= max) this else take(max - 1) + "…"
