package dev.trellis.test.eval

import dev.trellis.test.trajectory.Trajectory
import dev.trellis.test.trajectory.isSubsequence

/**
 * The ready-made scorers. Each reads its expectation from the case's `expect` object and does not apply
 * ([Score.notApplicable]) to a case without it, so one list of scorers serves a whole set:
 *
 * | scorer | expectation | passes when |
 * | --- | --- | --- |
 * | [exact] | `"output": "..."` | the output equals it (trimmed) |
 * | [contains] | `"contains": "..."` or `[...]` | the output contains each |
 * | [jsonSchema] | `"schema": {...}` | the output is JSON valid against the schema |
 * | [trajectory] | `"nodes": [...]`, `"tools": [...]`, `"match": "inOrder"` | the trajectory matches |
 * | [numeric] | `"number": 42, "tolerance": 0.5` | the output's number is within the tolerance |
 * | [llmJudge] | `"criteria": "..."` (optional) | a model judges the output good enough |
 */
public object Scorers {
    /** The output equals `expect.output` (both trimmed; [ignoreCase] to compare without case). */
    @JvmStatic
    @JvmOverloads
    public fun exact(ignoreCase: Boolean = false): Scorer = Scorer.of("exact") { case, output ->
        val expected = case.expected("output") ?: return@of Score.notApplicable("no expect.output")
        if (output.text.trim().equals(expected.trim(), ignoreCase)) {
            Score.pass("output equals the expected text")
        } else {
            Score.fail("expected \"${short(expected)}\", got \"${short(output.text)}\"")
        }
    }

    /** The output contains every text of `expect.contains`; the score is the share found. */
    @JvmStatic
    @JvmOverloads
    public fun contains(ignoreCase: Boolean = true): Scorer = Scorer.of("contains") { case, output ->
        val expected = case.expectedList("contains")
        if (expected.isEmpty()) return@of Score.notApplicable("no expect.contains")
        val missing = expected.filterNot { output.text.contains(it, ignoreCase) }
        val value = (expected.size - missing.size).toDouble() / expected.size
        if (missing.isEmpty()) {
            Score.pass("contains all of $expected")
        } else {
            Score.of(value, 1.0, "missing $missing in \"${short(output.text)}\"")
        }
    }

    /** The output is a JSON document valid against `expect.schema` (JSON Schema 2020-12 unless it says). */
    @JvmStatic
    public fun jsonSchema(): Scorer = Scorer.of("jsonSchema") { case, output ->
        val schema = case.expected["schema"] ?: return@of Score.notApplicable("no expect.schema")
        JsonSchemas.check(schema.toString(), output.text)
    }

    /** The output is a JSON document valid against [schema] (a JSON Schema as text), for every case. */
    @JvmStatic
    public fun jsonSchema(schema: String): Scorer =
        Scorer.of("jsonSchema") { _, output -> JsonSchemas.check(schema, output.text) }

    /**
     * The run's node executions match `expect.nodes` and its tool calls `expect.tools`, as `expect.match` says:
     * `inOrder` (the default: in this order, others allowed between), `exact` or `anyOrder`. Needs the output's events.
     */
    @JvmStatic
    public fun trajectory(): Scorer = Scorer.of("trajectory") { case, output ->
        val nodes = case.expectedList("nodes")
        val tools = case.expectedList("tools")
        if (nodes.isEmpty() && tools.isEmpty()) return@of Score.notApplicable("no expect.nodes or expect.tools")
        if (output.events.isEmpty()) return@of Score.fail("the output has no events; return them in EvalOutput")
        val match = case.expected("match") ?: "inOrder"
        val trajectory = Trajectory.of(output.events)
        val problems = listOfNotNull(
            mismatch("nodes", match, nodes, trajectory.nodes),
            mismatch("tools", match, tools, trajectory.toolCalls),
        )
        if (problems.isEmpty()) Score.pass("trajectory matches ($match)") else Score.fail(problems.joinToString("; "))
    }

    /**
     * The output's number (the first number in its text) is within `expect.tolerance` (else [tolerance]) of
     * `expect.number`.
     */
    @JvmStatic
    @JvmOverloads
    public fun numeric(tolerance: Double = 0.0): Scorer = Scorer.of("numeric") { case, output ->
        val expected = case.expected("number")?.toDoubleOrNull() ?: return@of Score.notApplicable("no expect.number")
        val allowed = case.expected("tolerance")?.toDoubleOrNull() ?: tolerance
        val actual = NUMBER.find(output.text)?.value?.toDoubleOrNull()
            ?: return@of Score.fail("no number in \"${short(output.text)}\"")
        if (kotlin.math.abs(actual - expected) <= allowed) {
            Score.pass("$actual is within $allowed of $expected")
        } else {
            Score.fail("$actual is not within $allowed of $expected")
        }
    }

    /**
     * A model judges the output: see [LlmJudge]. [rubric] says what a good answer is; the case's `expect.criteria`
     * is added to it. Passes at a score of [passAt] or more (0 to 1).
     */
    @JvmStatic
    @JvmOverloads
    public fun llmJudge(
        model: dev.langchain4j.model.chat.ChatModel,
        rubric: String,
        passAt: Double = 0.7,
    ): Scorer = LlmJudge(model, rubric, passAt)

    private val NUMBER = Regex("-?\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?")

    private fun mismatch(what: String, match: String, expected: List<String>, actual: List<String>): String? {
        if (expected.isEmpty()) return null
        val ok = when (match) {
            "exact" -> expected == actual
            "anyOrder" -> expected.sorted() == actual.sorted()
            "inOrder" -> isSubsequence(expected, actual)
            else -> throw IllegalArgumentException(
                "expect.match is '$match'; use exact, inOrder or anyOrder.",
            )
        }
        return if (ok) null else "$what expected $expected ($match), got $actual"
    }

    internal fun short(text: String): String = dev.trellis.test.internal.shorten(text, 120)
}
