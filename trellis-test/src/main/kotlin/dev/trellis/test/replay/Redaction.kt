package dev.trellis.test.replay

import java.util.Locale
import java.util.regex.Matcher
import java.util.regex.Pattern

/**
 * What a [Cassette] removes from everything it writes: API keys, `Authorization`-looking values and bearer tokens
 * by default ([DEFAULT]), plus patterns and literal values of your own. A redacted value is written as
 * `<redacted>`; requests are redacted the same way before they are compared on replay.
 */
public class Redaction private constructor(private val rules: List<Rule>, private val values: List<String>) {
    /**
     * A pattern, and the words (lower case) of which it cannot match a text that holds none: its regular expression
     * runs only on a text holding one of them (every call of a replayed model redacts its whole request, and a regular
     * expression tried at each character of a long prompt costs more than the rest of the replay). Null: always run.
     */
    private class Rule(val pattern: Pattern, val words: List<String>?)

    /** This redaction, also removing what [regex] matches (its group 1 when it has groups, else the whole match). */
    public fun pattern(regex: String): Redaction = Redaction(rules + Rule(Pattern.compile(regex), null), values)

    private fun pattern(regex: String, vararg words: String): Redaction =
        Redaction(rules + Rule(Pattern.compile(regex), words.toList()), values)

    /** This redaction, also removing [value] wherever it appears (a key read from the environment); blank: none. */
    public fun value(value: String?): Redaction =
        if (value.isNullOrBlank()) this else Redaction(rules, values + value)

    /** [text] with every secret replaced by `<redacted>`. */
    public fun apply(text: String): String {
        var out = text
        for (value in values) if (value in out) out = out.replace(value, REDACTED)
        var lower: String? = null
        for (rule in rules) {
            if (rule.words != null) {
                val folded = lower ?: out.lowercase(Locale.ROOT).also { lower = it }
                if (rule.words.none { it in folded }) continue
            }
            val matcher = rule.pattern.matcher(out)
            if (!matcher.find()) continue
            out = replaceAll(matcher, out)
            lower = null
        }
        return out
    }

    private fun replaceAll(matcher: Matcher, text: String): String {
        val out = StringBuilder()
        var last = 0
        do {
            val group = if (matcher.groupCount() >= 1 && matcher.group(1) != null) 1 else 0
            out.append(text, last, matcher.start(group)).append(REDACTED)
            last = matcher.end(group)
        } while (matcher.find())
        return out.append(text, last, text.length).toString()
    }

    override fun toString(): String = "Redaction(${rules.size} pattern(s), ${values.size} value(s))"

    /** The redactions. */
    public companion object {
        /** What replaces a secret. */
        public const val REDACTED: String = "<redacted>"

        /** No redaction at all. */
        @JvmField
        public val NONE: Redaction = Redaction(emptyList(), emptyList())

        /**
         * API keys (`sk-...`, `AIza...`), bearer tokens, and the values of `api_key`, `apiKey`, `authorization`,
         * `x-api-key`, `token`, `secret` and `password` fields (`key: value`, `key=value`, `"key": "value"`).
         */
        @JvmField
        public val DEFAULT: Redaction =
            NONE.pattern("(?i)\\bBearer\\s+([A-Za-z0-9._~+/=-]{8,})", "bearer")
                .pattern("\\b(sk-[A-Za-z0-9_-]{16,})", "sk-")
                .pattern("\\b(AIza[A-Za-z0-9_-]{20,})", "aiza")
                .pattern(
                    "(?i)\"?(?:api[_-]?key|authorization|x-api-key|access[_-]?token|token|secret|password)\"?\\s*[:=]" +
                        "\\s*\"?(?:Bearer\\s+|Basic\\s+)?+((?!<redacted>)[^\"\\s,}&]+)",
                    "key",
                    "authorization",
                    "token",
                    "secret",
                    "password",
                )
    }
}
