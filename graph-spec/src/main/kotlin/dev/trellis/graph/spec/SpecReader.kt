package dev.trellis.graph.spec

import kotlin.time.Duration

/** Reads typed values out of [SpecValue]s, recording a located problem (with its fix) for each that does not fit. */
internal class SpecReader {
    val problems = ArrayList<SpecProblem>()

    fun report(at: SpecValue, message: String) {
        problems += at.problem(message)
    }

    /**
     * [value] as a mapping whose keys are among [allowed] and hold every one of [required]; reports a value that is no
     * mapping, unknown keys (with the closest known one), keys given twice and missing keys.
     */
    fun obj(value: SpecValue?, what: String, allowed: Set<String>, required: Set<String> = emptySet()): SpecValue.Obj? {
        if (value == null) return null
        if (value !is SpecValue.Obj) {
            report(value, "$what must be a mapping (keys ${allowed.joinToString()}), but is ${value.what}.")
            return null
        }
        val seen = HashSet<String>()
        for ((key, _) in value.entries) {
            if (!seen.add(key.text)) {
                report(key, "$what declares '${key.text}' twice; keep one.")
            } else if (key.text !in allowed) {
                report(
                    key,
                    "$what has no field '${key.text}'${suggest(key.text, allowed)}; the fields are " +
                        "${allowed.joinToString()}.",
                )
            }
        }
        for (name in required) {
            if (value[name] == null) report(value, "$what needs '$name'; add it.")
        }
        return value
    }

    /** [value]'s entries as a map from each key to its value; reports keys given twice. */
    fun entries(value: SpecValue?, what: String): List<Pair<SpecValue.Str, SpecValue>> {
        if (value == null) return emptyList()
        if (value !is SpecValue.Obj) {
            report(value, "$what must be a mapping, but is ${value.what}.")
            return emptyList()
        }
        val seen = HashSet<String>()
        return value.entries.filter { (key, _) ->
            seen.add(key.text).also { fresh ->
                if (!fresh) {
                    report(
                        key,
                        "$what declares '${key.text}' twice; ids " +
                            "must be unique, rename or remove one.",
                    )
                }
            }
        }
    }

    fun list(value: SpecValue?, what: String): List<SpecValue> {
        if (value == null) return emptyList()
        if (value !is SpecValue.Arr) {
            report(value, "$what must be a list, but is ${value.what}.")
            return emptyList()
        }
        return value.items
    }

    fun string(value: SpecValue?, what: String): String? {
        if (value == null) return null
        if (value !is SpecValue.Str || value.kind == SpecValue.Kind.NULL) {
            report(value, "$what must be a string, but is ${value.what}.")
            return null
        }
        return value.text
    }

    fun name(value: SpecValue?, what: String): String? = string(value, what)?.also {
        if (it.isBlank()) report(value!!, "$what is blank; give a name.")
    }

    fun int(value: SpecValue?, what: String, min: Int = Int.MIN_VALUE): Int? {
        if (value == null) return null
        val number = (value as? SpecValue.Str)?.takeIf { it.kind == SpecValue.Kind.INT }?.text?.toIntOrNull()
        if (number == null || number < min) {
            report(
                value,
                "$what must be a whole number${if (min > Int.MIN_VALUE) " of at least $min" else ""}, " +
                    "but is ${value.what}.",
            )
            return null
        }
        return number
    }

    fun double(value: SpecValue?, what: String): Double? {
        if (value == null) return null
        val ok = value is SpecValue.Str && (value.kind == SpecValue.Kind.INT || value.kind == SpecValue.Kind.FLOAT)
        if (!ok) {
            report(value, "$what must be a number, but is ${value.what}.")
            return null
        }
        return value.text.toDouble()
    }

    fun bool(value: SpecValue?, what: String): Boolean? {
        if (value == null) return null
        if (value !is SpecValue.Str || value.kind != SpecValue.Kind.BOOL) {
            report(value, "$what must be true or false, but is ${value.what}.")
            return null
        }
        return value.text == "true"
    }

    /** A positive duration such as `30s`, `250ms`, `1m 30s` or `PT30S`. */
    fun duration(value: SpecValue?, what: String, allowZero: Boolean = false): Duration? {
        val text = string(value, what) ?: return null
        val parsed = Duration.parseOrNull(text)
        if (parsed == null || parsed.isNegative() || (!allowZero && parsed == Duration.ZERO)) {
            val kind = if (allowZero) "a duration" else "a positive duration"
            report(value!!, "$what must be $kind such as 30s, 250ms, 1m 30s or PT30S, but is '$text'.")
            return null
        }
        return parsed
    }

    fun <T> oneOf(value: SpecValue?, what: String, choices: Map<String, T>): T? {
        val text = string(value, what) ?: return null
        return choices[text] ?: run {
            report(
                value!!,
                "$what is '$text'${suggest(text, choices.keys)}; use one of " +
                    "${choices.keys.joinToString()}.",
            )
            null
        }
    }

    companion object {
        /** ", did you mean 'x'?" for the known name closest to [name], when one is close. */
        fun suggest(name: String, known: Collection<String>): String {
            val best = known.minByOrNull { distance(name.lowercase(), it.lowercase()) } ?: return ""
            return if (distance(name.lowercase(), best.lowercase()) <= maxOf(2, name.length / 3)) {
                " (did you mean " +
                    "'$best'?)"
            } else {
                ""
            }
        }

        private fun distance(a: String, b: String): Int {
            var previous = IntArray(b.length + 1) { it }
            for (i in 1..a.length) {
                val current = IntArray(b.length + 1)
                current[0] = i
                for (j in 1..b.length) {
                    val cost = if (a[i - 1] == b[j - 1]) 0 else 1
                    current[j] = minOf(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                }
                previous = current
            }
            return previous[b.length]
        }
    }
}
