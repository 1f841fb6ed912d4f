package dev.trellis.graph.spec

/**
 * One problem of a graph spec: where it is and what to do about it.
 *
 * [pointer] is a JSON pointer into the document (`/graphs/research/nodes/plan/handler`); [line] and [column] are
 * 1-based positions in the text, or 0 when the problem has no single place (a cycle between graphs is reported at
 * the first graph of the cycle).
 */
public class SpecProblem(
    /** The JSON pointer of the value the problem is about. */
    public val pointer: String,
    /** The 1-based line of that value in the text, or 0 when unknown. */
    public val line: Int,
    /** The 1-based column of that value in the text, or 0 when unknown. */
    public val column: Int,
    /** What is wrong and how to fix it. */
    public val message: String,
) {
    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is SpecProblem && other.pointer == pointer && other.line == line && other.column == column &&
                    other.message == message
            )

    override fun hashCode(): Int = ((pointer.hashCode() * 31 + line) * 31 + column) * 31 + message.hashCode()

    override fun toString(): String =
        (if (line > 0) "line $line, column $column " else "") + "(${pointer.ifEmpty { "/" }}): $message"
}

/**
 * Thrown when a graph spec cannot be loaded (or a graph cannot be exported): [problems] lists every problem found
 * at once, each with its location and its fix.
 */
public class GraphSpecException(
    /** Every problem found, in document order. */
    public val problems: List<SpecProblem>,
) : IllegalArgumentException(
        "The graph spec is invalid (${problems.size} problem${if (problems.size == 1) "" else "s"}):\n" +
            problems.joinToString("\n") { "  - $it" },
    )
