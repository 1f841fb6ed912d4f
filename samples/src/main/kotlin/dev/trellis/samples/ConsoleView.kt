package dev.trellis.samples

import com.github.ajalt.mordant.animation.Animation
import com.github.ajalt.mordant.animation.animation
import com.github.ajalt.mordant.rendering.TextColors.brightBlue
import com.github.ajalt.mordant.rendering.TextColors.cyan
import com.github.ajalt.mordant.rendering.TextColors.gray
import com.github.ajalt.mordant.rendering.TextColors.green
import com.github.ajalt.mordant.rendering.TextColors.magenta
import com.github.ajalt.mordant.rendering.TextColors.red
import com.github.ajalt.mordant.rendering.TextColors.yellow
import com.github.ajalt.mordant.rendering.TextStyles.bold
import com.github.ajalt.mordant.table.table
import com.github.ajalt.mordant.terminal.Terminal
import com.github.ajalt.mordant.widgets.Text
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.agent.AgentEvent
import kotlin.time.TimeSource

/**
 * Shows a sample's events as they arrive: one readable line per event, and — when the terminal is
 * interactive — a live table of the nodes below them that redraws while parallel branches run.
 */
internal class ConsoleView(private val terminal: Terminal, live: Boolean) {
    private val start = TimeSource.Monotonic.markNow()
    private val rows = LinkedHashMap<String, Row>()
    private val tokens = HashMap<String, StringBuilder>()
    private val runs = LinkedHashSet<String>()
    private val animation: Animation<Unit>? = if (live) terminal.animation<Unit> { table() } else null

    private class Row(val run: String, val node: String) {
        var status = "started"
        var execution = 0
        var attempt = 1
        var started = TimeSource.Monotonic.markNow()
        var finishedMs: Long? = null
        var last = ""
    }

    fun onEvent(event: RunEvent) {
        runs += event.runId
        val run = shortRun(event.runId)
        when (event) {
            is RunEvent.RunStarted -> line(bold("run $run started") + gray(" graph=${event.graphId}"))
            is RunEvent.NodeStarted -> {
                val row = rows.getOrPut("$run/${event.nodeId}") { Row(run, event.nodeId) }
                row.status = "running"
                row.execution = event.execution
                row.attempt = 1
                row.started = TimeSource.Monotonic.markNow()
                row.finishedMs = null
                line(cyan("▶ ${node(run, event.nodeId, event.execution)} started"))
            }
            is RunEvent.NodeRetrying -> {
                row(run, event.nodeId)?.let {
                    it.status = "retrying"
                    it.attempt = event.attempt + 1
                }
                line(
                    yellow(
                        "↻ ${node(
                            run,
                            event.nodeId,
                            event.execution,
                        )} attempt ${event.attempt} failed: ${event.error.message}; retrying in ${event.delay.toMillis()} ms",
                    ),
                )
            }
            is RunEvent.NodeCompleted -> {
                finish(run, event.nodeId, "done", event.duration.toMillis())
                val streamed = tokens.remove("$run/${event.nodeId}")?.toString()?.trim()
                val extra = if (streamed.isNullOrEmpty()) "" else gray("  streamed: \"$streamed\"")
                line(
                    green(
                        "✔ ${node(run, event.nodeId, event.execution)} completed in ${event.duration.toMillis()} ms",
                    ) +
                        attempts(event.attempts) +
                        extra,
                )
            }
            is RunEvent.NodeFailed -> {
                finish(run, event.nodeId, "failed", event.duration.toMillis())
                line(
                    red(
                        "✘ ${node(
                            run,
                            event.nodeId,
                            event.execution,
                        )} failed after ${event.attempts} attempt(s): ${event.error.message}",
                    ),
                )
            }
            is RunEvent.NodeCancelled -> {
                finish(run, event.nodeId, "cancelled", null)
                line(magenta("■ ${node(run, event.nodeId, event.execution)} cancelled"))
            }
            is RunEvent.EdgeTaken -> line(
                gray("  ${prefix(run)}${event.from} → ${if (event.to == "__end__") "END" else event.to}"),
            )
            is RunEvent.Custom -> when (val p = event.payload) {
                is AgentEvent.Token -> {
                    tokens.getOrPut("$run/${event.nodeId}") { StringBuilder() }.append(p.text)
                    row(run, event.nodeId)?.last = "✎ ${tokens["$run/${event.nodeId}"].toString().takeLast(30)}"
                    animation?.update(Unit)
                }
                is AgentEvent.Step -> {
                    row(run, event.nodeId)?.last = p.description
                    line(brightBlue("  ${node(run, event.nodeId, event.execution)} [${p.agent}] ${p.description}"))
                }
                else -> {
                    row(run, event.nodeId)?.last = p.toString()
                    line(brightBlue("  ${node(run, event.nodeId, event.execution)} ⋯ $p"))
                }
            }
            is RunEvent.RunCompleted -> line(
                bold(green("run $run COMPLETED in ${event.result.duration.toMillis()} ms")),
            )
            is RunEvent.RunFailed -> line(bold(red("run $run FAILED: ${event.error.message}")))
            is RunEvent.RunCancelled -> line(
                bold(magenta("run $run CANCELLED after ${event.result.duration.toMillis()} ms")),
            )
            is RunEvent.RunInterrupted -> line(
                bold(
                    yellow(
                        "run $run INTERRUPTED: ${event.result.interrupts.joinToString { "${it.nodeId} asks \"${it.payload}\"" }.ifEmpty { "drained" }}",
                    ),
                ),
            )
            is RunEvent.CheckpointSaved -> line(
                gray("  ${prefix(run)}checkpoint ${event.checkpoint}${if (event.full) " (full)" else ""} saved"),
            )
        }
    }

    /** Redraws the live table (elapsed times of running nodes); called on a timer. */
    fun tick() {
        animation?.update(Unit)
    }

    fun close() {
        animation?.update(Unit)
        animation?.stop()
    }

    private fun line(text: String) {
        terminal.println("${gray(String.format("%6d ms", start.elapsedNow().inWholeMilliseconds))} $text")
        animation?.update(Unit)
    }

    private fun row(run: String, node: String): Row? = rows["$run/$node"]

    private fun finish(run: String, node: String, status: String, ms: Long?) {
        val row = row(run, node) ?: return
        row.status = status
        row.finishedMs = ms ?: row.started.elapsedNow().inWholeMilliseconds
    }

    private fun prefix(run: String) = if (runs.size > 1) "$run/" else ""

    private fun node(run: String, node: String, execution: Int) = "${prefix(run)}$node#$execution"

    private fun attempts(n: Int) = if (n > 1) yellow(" ($n attempts)") else ""

    private fun table() = if (rows.isEmpty()) {
        Text("")
    } else {
        table {
            header { row("node", "status", "attempt", "time", "latest") }
            body {
                for (row in rows.values) {
                    val ms = row.finishedMs ?: row.started.elapsedNow().inWholeMilliseconds
                    val status = when (row.status) {
                        "done" -> green("✔ done")
                        "failed" -> red("✘ failed")
                        "cancelled" -> magenta("■ cancelled")
                        "retrying" -> yellow("↻ retrying")
                        else -> cyan("${SPINNER[(ms / 100 % SPINNER.length).toInt()]} running")
                    }
                    row(
                        "${prefix(row.run)}${row.node}#${row.execution}",
                        status,
                        row.attempt,
                        "$ms ms",
                        row.last.take(40),
                    )
                }
            }
        }
    }

    private companion object {
        const val SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

        fun shortRun(runId: String) = runId.take(8)
    }
}
