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
                val row = rows.getOrPut("$run/${event.path}") { Row(run, event.path) }
                row.status = "running"
                row.execution = event.execution
                row.attempt = 1
                row.started = TimeSource.Monotonic.markNow()
                row.finishedMs = null
                line(cyan("▶ ${node(run, event.path, event.execution)} started"), event.path)
            }
            is RunEvent.NodeRetrying -> {
                row(run, event.path)?.let {
                    it.status = "retrying"
                    it.attempt = event.attempt + 1
                }
                line(
                    yellow(
                        "↻ ${node(
                            run,
                            event.path,
                            event.execution,
                        )} attempt ${event.attempt} failed: ${event.error.message}; retrying in ${event.delay.toMillis()} ms",
                    ),
                    event.path,
                )
            }
            is RunEvent.NodeCompleted -> {
                finish(run, event.path, "done", event.duration.toMillis())
                val streamed = tokens.remove("$run/${event.path}")?.toString()?.trim()
                val extra = if (streamed.isNullOrEmpty()) "" else gray("  streamed: \"$streamed\"")
                line(
                    green(
                        "✔ ${node(run, event.path, event.execution)} completed in ${event.duration.toMillis()} ms",
                    ) +
                        attempts(event.attempts) +
                        extra,
                    event.path,
                )
            }
            is RunEvent.NodeFailed -> {
                finish(run, event.path, "failed", event.duration.toMillis())
                line(
                    red(
                        "✘ ${node(
                            run,
                            event.path,
                            event.execution,
                        )} failed after ${event.attempts} attempt(s): ${event.error.message}" +
                            (event.routedTo?.let { " → routed to $it" } ?: ""),
                    ),
                    event.path,
                )
            }
            is RunEvent.NodeCancelled -> {
                finish(run, event.path, "cancelled", null)
                line(magenta("■ ${node(run, event.path, event.execution)} cancelled"), event.path)
            }
            is RunEvent.NodeCompensating -> Unit
            is RunEvent.NodeCompensated ->
                line(magenta("↶ ${node(run, event.path, event.execution)} compensated"), event.path)
            is RunEvent.NodeCompensationFailed ->
                line(red("↶ ${node(run, event.path, event.execution)} compensation failed: ${event.error}"), event.path)
            is RunEvent.EdgeTaken -> line(
                gray("  ${prefix(run)}${event.from} → ${if (event.to == "__end__") "END" else event.to}"),
                event.from,
            )
            is RunEvent.Custom -> when (val p = event.payload) {
                is AgentEvent.Token -> {
                    tokens.getOrPut("$run/${event.path}") { StringBuilder() }.append(p.text)
                    row(run, event.path)?.last = "✎ ${tokens["$run/${event.path}"].toString().takeLast(30)}"
                    animation?.update(Unit)
                }
                is AgentEvent.Step -> {
                    row(run, event.path)?.last = p.description
                    line(
                        brightBlue("  ${node(run, event.path, event.execution)} [${p.agent}] ${p.description}"),
                        event.path,
                    )
                }
                else -> {
                    row(run, event.path)?.last = p.toString()
                    line(brightBlue("  ${node(run, event.path, event.execution)} ⋯ $p"), event.path)
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
                        "run $run INTERRUPTED: ${event.result.interrupts.joinToString { "${it.path} asks \"${it.payload}\"" }.ifEmpty { "drained" }}",
                    ),
                ),
            )
            is RunEvent.CheckpointSaved -> line(
                gray("  ${prefix(run)}checkpoint ${event.checkpoint}${if (event.full) " (full)" else ""} saved"),
            )
            is RunEvent.NodeCacheHit -> line(
                gray("  ${node(run, event.path, event.execution)} cache hit"),
                event.path,
            )
            is RunEvent.NodeCacheStored -> Unit
            is RunEvent.MetersCharged -> Unit // the totals are in the summary
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

    /** Prints [text], indented by the depth of [path] so that child nodes sit under their map task or subgraph. */
    private fun line(text: String, path: String = "") {
        val indent = "  ".repeat(path.count { it == '/' || it == '[' })
        terminal.println("${gray(String.format("%6d ms", start.elapsedNow().inWholeMilliseconds))} $indent$text")
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
                        "  ".repeat(row.node.count { it == '/' || it == '[' }) +
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
