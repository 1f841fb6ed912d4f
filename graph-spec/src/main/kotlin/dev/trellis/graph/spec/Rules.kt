package dev.trellis.graph.spec

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.doubleOrNull
import java.util.Collections
import java.util.WeakHashMap

/**
 * What the loader made that a spec describes without a registered name: declarative conditions, interrupt node bodies
 * and map item inputs. Export reads them back from here (a weak map: they live as long as their graphs).
 */
internal object Origins {
    private val made: MutableMap<Any, JsonElement> = Collections.synchronizedMap(WeakHashMap())

    fun <T : Any> record(made: T, spec: JsonElement): T = made.also { this.made[it] = spec }

    fun of(made: Any): JsonElement? = this.made[made]
}

/**
 * Declarative conditions on state values: `{key: drafts, op: ge, value: 3}`, combined with `{all: [...]}`,
 * `{any: [...]}` and `{not: {...}}`. A key's value is compared as its JSON form (its serializer's), numbers as numbers.
 */
internal object Rules {
    val OPS: Set<String> =
        linkedSetOf("eq", "ne", "lt", "le", "gt", "ge", "startsWith", "endsWith", "contains", "isNull", "notNull")

    private val json = Json

    /** The condition [rule] describes, or null after reporting its problems to [reader]. */
    fun compile(
        rule: SpecValue,
        schema: StateSchema,
        reader: SpecReader,
        brokenKeys: Set<String> = emptySet(),
    ): ((State) -> Boolean)? {
        val what = "The rule"
        val obj = reader.obj(rule, what, setOf("key", "op", "value", "all", "any", "not")) ?: return null
        val combinators = listOf("all", "any", "not").filter { obj[it] != null }
        if (combinators.size + (if (obj["key"] != null) 1 else 0) != 1) {
            reader.report(obj, "$what must have exactly one of 'key' (with 'op'), 'all', 'any' or 'not'.")
            return null
        }
        when (combinators.firstOrNull()) {
            "all", "any" -> {
                val parts = reader.list(
                    obj[combinators[0]],
                    "'${combinators[0]}'",
                ).map { compile(it, schema, reader, brokenKeys) }
                if (parts.isEmpty() || parts.any { it == null }) {
                    if (parts.isEmpty()) reader.report(obj, "'${combinators[0]}' needs at least one rule.")
                    return null
                }
                val all = parts.requireNoNulls()
                return if (combinators[0] == "all") { s -> all.all { it(s) } } else { s -> all.any { it(s) } }
            }
            "not" -> {
                val inner = compile(obj["not"]!!, schema, reader, brokenKeys) ?: return null
                return { s -> !inner(s) }
            }
        }
        val keyName = reader.name(obj["key"], "The rule's 'key'") ?: return null
        val op = reader.oneOf(
            obj["op"] ?: run {
                reader.report(
                    obj,
                    "$what needs 'op' " +
                        "(${OPS.joinToString()}).",
                )
                return null
            },
            "The rule's 'op'",
            OPS.associateWith { it },
        ) ?: return null

        @Suppress("UNCHECKED_CAST")
        val key = schema.keyOrNull(keyName) as StateKey<Any?>? ?: run {
            if (keyName in brokenKeys) return null
            reader.report(
                obj["key"]!!,
                "The rule reads key '$keyName', which the state does not " +
                    "declare${SpecReader.suggest(keyName, schema.keys.map { it.name })}; declare it under state.keys " +
                    "or fix the name.",
            )
            return null
        }
        val needsValue = op != "isNull" && op != "notNull"
        val value = obj["value"]
        if (needsValue && value == null) {
            reader.report(obj, "The rule '$keyName $op' needs a 'value' to compare with; add one.")
            return null
        }
        val expected = value?.let { toJson(it) } ?: JsonNull
        return { state -> test(op, actual(state, key), expected) }
    }

    private fun actual(state: State, key: StateKey<Any?>): JsonElement =
        if (!state.contains(key)) {
            JsonNull
        } else {
            state[key]?.let { json.encodeToJsonElement(key.serializer, it) }
                ?: JsonNull
        }

    private fun test(op: String, actual: JsonElement, expected: JsonElement): Boolean = when (op) {
        "eq" -> same(actual, expected)
        "ne" -> !same(actual, expected)
        "lt", "le", "gt", "ge" -> {
            val c = compare(actual, expected)
            c != null && when (op) {
                "lt" -> c < 0
                "le" -> c <= 0
                "gt" -> c > 0
                else -> c >= 0
            }
        }
        "startsWith" -> text(expected)?.let { prefix -> text(actual)?.startsWith(prefix) } ?: false
        "endsWith" -> text(expected)?.let { suffix -> text(actual)?.endsWith(suffix) } ?: false
        "contains" -> when (actual) {
            is JsonArray -> actual.any { same(it, expected) }
            is JsonObject -> text(expected)?.let { it in actual } ?: false
            else -> text(expected)?.let { part -> text(actual)?.contains(part) } ?: false
        }
        "isNull" -> actual is JsonNull
        else -> actual !is JsonNull
    }

    private fun text(e: JsonElement): String? = (e as? JsonPrimitive)?.takeIf { it.isString }?.content

    private fun same(a: JsonElement, b: JsonElement): Boolean {
        if (a is JsonPrimitive && b is JsonPrimitive && !a.isString && !b.isString) {
            val x = a.doubleOrNull
            val y = b.doubleOrNull
            if (x != null && y != null) return x == y
        }
        return a == b
    }

    private fun compare(a: JsonElement, b: JsonElement): Int? {
        if (a !is JsonPrimitive || b !is JsonPrimitive || a is JsonNull || b is JsonNull) return null
        if (a.isString && b.isString) return a.content.compareTo(b.content)
        if (a.isString || b.isString) return null
        val x = a.doubleOrNull ?: return null
        val y = b.doubleOrNull ?: return null
        return x.compareTo(y)
    }

    /** [value] as JSON. */
    fun toJson(value: SpecValue): JsonElement = when (value) {
        is SpecValue.Obj -> JsonObject(value.entries.associate { (k, v) -> k.text to toJson(v) })
        is SpecValue.Arr -> JsonArray(value.items.map(::toJson))
        is SpecValue.Str -> when (value.kind) {
            SpecValue.Kind.STRING -> JsonPrimitive(value.text)
            SpecValue.Kind.INT -> JsonPrimitive(value.text.toBigInteger())
            SpecValue.Kind.FLOAT -> JsonPrimitive(value.text.toDouble())
            SpecValue.Kind.BOOL -> JsonPrimitive(value.text == "true")
            SpecValue.Kind.NULL -> JsonNull
        }
    }
}
