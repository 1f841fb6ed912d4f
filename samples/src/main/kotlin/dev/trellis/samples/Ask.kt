package dev.trellis.samples

import com.github.ajalt.mordant.rendering.TextColors.yellow
import com.github.ajalt.mordant.rendering.TextStyles.bold
import com.github.ajalt.mordant.terminal.Terminal
import dev.trellis.runtime.Interrupt
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

/**
 * Answers interrupts by asking on stdin (the CLI's `--interactive`): prints the interrupt's path and question — on
 * stderr when stdout carries JSON lines — and returns the line typed; an empty line or the end of stdin answers "yes".
 */
internal fun askOnStdin(terminal: Terminal, json: Boolean): suspend (Interrupt) -> String = { interrupt ->
    val prompt = "${interrupt.path} asks: ${interrupt.payload} [yes] "
    if (json) {
        System.err.print(prompt)
        System.err.flush()
    } else {
        terminal.print(bold(yellow(prompt)))
    }
    val line = withContext(Dispatchers.IO) { readlnOrNull() }?.trim()
    if (line.isNullOrEmpty()) "yes" else line
}
