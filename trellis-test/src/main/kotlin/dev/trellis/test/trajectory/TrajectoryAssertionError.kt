package dev.trellis.test.trajectory

import dev.trellis.test.internal.lineDiff
import org.opentest4j.AssertionFailedError

/** Fails a trajectory assertion with a message showing expected and actual lists and their diff. */
internal fun listMismatch(what: String, how: String, expected: List<String>, actual: List<String>): Nothing =
    throw AssertionFailedError(
        "$what differ ($how).\n" +
            "Expected: $expected\n" +
            "Actual:   $actual\n" +
            "Diff (- expected, + actual):\n" + lineDiff(expected, actual),
        expected,
        actual,
    )

/** Whether [expected] appears in [actual] in its order, other items allowed between. */
internal fun isSubsequence(expected: List<String>, actual: List<String>): Boolean {
    var i = 0
    for (item in actual) if (i < expected.size && item == expected[i]) i++
    return i == expected.size
}
