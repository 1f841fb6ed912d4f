package dev.trellis.test.internal

/**
 * A line diff of [expected] against [actual]: lines only in [expected] start with `- `, only in [actual] with
 * `+ `, common lines with two spaces (a longest common subsequence; inputs are small).
 */
internal fun lineDiff(expected: List<String>, actual: List<String>): String {
    val n = expected.size
    val m = actual.size
    val lcs = Array(n + 1) { IntArray(m + 1) }
    for (i in n - 1 downTo 0) {
        for (j in m - 1 downTo 0) {
            lcs[i][j] =
                if (expected[i] == actual[j]) lcs[i + 1][j + 1] + 1 else maxOf(lcs[i + 1][j], lcs[i][j + 1])
        }
    }
    val out = StringBuilder()
    var i = 0
    var j = 0
    while (i < n || j < m) {
        when {
            i < n && j < m && expected[i] == actual[j] -> out.append("    ").append(expected[i++]).also { j++ }
            j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) -> out.append("  + ").append(actual[j++])
            else -> out.append("  - ").append(expected[i++])
        }
        out.append('\n')
    }
    return out.toString().trimEnd('\n')
}
