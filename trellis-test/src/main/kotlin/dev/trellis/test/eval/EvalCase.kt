package dev.trellis.test.eval

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull

/**
 * One case of an [EvalSet]: an [id], the [input] given to the graph, and the [expected] results the scorers
 * check (each scorer reads its own fields: `output`, `contains`, `schema`, `nodes`, `tools`, `number`,
 * `criteria`...), with optional [tags].
 *
 * A line of an eval set's JSONL file:
 * ```json
 * {"id": "sky", "input": {"question": "Why is the sky blue?"}, "expect": {"contains": ["Rayleigh"]}}
 * ```
 */
public class EvalCase @JvmOverloads constructor(
    /** The case's id, unique in its set. */
    public val id: String,
    /** The input, a JSON object (its fields usually map to state keys). */
    public val input: JsonObject,
    /** What the scorers expect, a JSON object. */
    public val expected: JsonObject = JsonObject(emptyMap()),
    /** Free labels, to select or group cases. */
    public val tags: List<String> = emptyList(),
) {
    init {
        require(id.isNotBlank()) { "An eval case needs an id; give each line of the set an \"id\"." }
    }

    /** Input field [name] as text (a JSON string's content, else the JSON), or null when absent. */
    public fun input(name: String): String? = input[name]?.let(::text)

    /** Expectation [name] as text, or null when absent. */
    public fun expected(name: String): String? = expected[name]?.let(::text)

    /** Expectation [name] as a list of texts (a JSON array, or a single value), empty when absent. */
    public fun expectedList(name: String): List<String> = when (val value = expected[name]) {
        null -> emptyList()
        is JsonArray -> value.map(::text)
        else -> listOf(text(value))
    }

    override fun toString(): String = "EvalCase($id)"

    private companion object {
        fun text(element: JsonElement): String =
            (element as? JsonPrimitive)?.takeIf { it.isString }?.contentOrNull ?: element.toString()
    }
}
