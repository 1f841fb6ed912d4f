package dev.trellis.runtime.internal.execution

import dev.trellis.graph.Graph

/**
 * The answers to a run's pending interrupts, by path (`docs/semantics.md` §11): each is taken once, by the
 * execution at its path; a child run takes those under its path. Node coroutines read them concurrently, hence
 * the lock (never taken when the run has no answers, the common case).
 */
internal class Answers private constructor(answers: Map<String, String>) {
    private val byPath: MutableMap<String, String> = HashMap(answers)

    /** Fails when an answer's path names no node of [graph] (checked for a run of its own, not a child run). */
    fun requireNodesOf(graph: Graph) {
        for (path in byPath.keys) {
            val nodeId = path.substringBefore('/').substringBefore('[')
            require(graph.topology.indexOf(nodeId) >= 0) {
                "Cannot answer '$path': graph '${graph.id}' has no node '$nodeId'."
            }
        }
    }

    /** Whether there are none (left). */
    val isEmpty: Boolean get() = byPath.isEmpty()

    /** The answer for the interrupt at [path], once. */
    fun take(path: String): String? = if (byPath.isEmpty()) null else synchronized(byPath) { byPath.remove(path) }

    /**
     * Whether there is an answer for the node at [path] or for anything under it (`research/approve`,
     * `research[2]`): that execution resumes an interrupt, and bypasses the node cache (`docs/semantics.md` §13.5).
     */
    fun hasUnder(path: String): Boolean = byPath.isNotEmpty() &&
        synchronized(byPath) {
            byPath.keys.any { it == path || it.startsWith("$path/") || it.startsWith("$path[") }
        }

    /** The answers for the interrupts under [prefix] (a child run's), taken from these. */
    fun takeUnder(prefix: String): Map<String, String> {
        if (byPath.isEmpty()) return emptyMap()
        synchronized(byPath) {
            val taken = byPath.filterKeys { it.startsWith(prefix) }
            byPath.keys.removeAll(taken.keys)
            return taken
        }
    }

    companion object {
        /** No answers (shared: nothing is ever added to a run's answers). */
        private val NONE = Answers(emptyMap())

        /** The answers [answers], copied. */
        fun of(answers: Map<String, String>): Answers = if (answers.isEmpty()) NONE else Answers(answers)
    }
}
