package dev.trellis.test.eval

import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonPrimitive
import java.nio.file.Files
import java.nio.file.Path

/**
 * Cases to evaluate a graph on, usually read from a JSONL file: one JSON object per line with `id`, `input`
 * (an object), `expect` (an object, optional) and `tags` (an array of strings, optional). Blank lines and lines
 * starting with `//` are skipped.
 */
public class EvalSet(
    /** The set's name (its file name without extension, when loaded). */
    public val name: String,
    /** The cases, in file order. */
    public val cases: List<EvalCase>,
) {
    init {
        val duplicates = cases.groupBy { it.id }.filterValues { it.size > 1 }.keys
        require(
            duplicates.isEmpty(),
        ) { "Eval set '$name' has duplicate case ids $duplicates; give each case its own id." }
    }

    /** The cases tagged [tag]. */
    public fun tagged(tag: String): EvalSet = EvalSet("$name[$tag]", cases.filter { tag in it.tags })

    override fun toString(): String = "EvalSet($name, ${cases.size} cases)"

    /** Reads eval sets. */
    public companion object {
        /** Reads the JSONL file at [path]. */
        @JvmStatic
        public fun load(path: Path): EvalSet =
            parse(path.fileName.toString().substringBeforeLast('.'), Files.readString(path), path.toString())

        /** Reads the JSONL class path resource [resource] (e.g. `evals/research.jsonl`). */
        @JvmStatic
        public fun fromResource(resource: String): EvalSet {
            val stream = Thread.currentThread().contextClassLoader?.getResourceAsStream(resource)
                ?: EvalSet::class.java.classLoader.getResourceAsStream(resource)
                ?: throw IllegalArgumentException("No class path resource '$resource'; check its name and folder.")
            val text = stream.use { String(it.readAllBytes(), Charsets.UTF_8) }
            return parse(resource.substringAfterLast('/').substringBeforeLast('.'), text, resource)
        }

        /** Reads JSONL [text] as set [name]; errors name [source] and the line. */
        @JvmStatic
        @JvmOverloads
        public fun parse(name: String, text: String, source: String = name): EvalSet {
            val cases = ArrayList<EvalCase>()
            text.lineSequence().forEachIndexed { index, raw ->
                val line = raw.trim()
                if (line.isEmpty() || line.startsWith("//")) return@forEachIndexed
                cases += parseLine(line, "$source:${index + 1}")
            }
            return EvalSet(name, cases)
        }

        private fun parseLine(line: String, where: String): EvalCase {
            val json = try {
                Json.parseToJsonElement(line) as? JsonObject
                    ?: throw IllegalArgumentException("$where is not a JSON object; each line is one case object.")
            } catch (e: SerializationException) {
                throw IllegalArgumentException("$where is not valid JSON (${e.message}); fix that line.", e)
            }
            val id = (json["id"] as? JsonPrimitive)?.content
                ?: throw IllegalArgumentException("$where has no \"id\"; give each case an id.")
            val input = json["input"] as? JsonObject
                ?: throw IllegalArgumentException("$where (case '$id') has no \"input\" object; add one.")
            val expect = json["expect"] as? JsonObject ?: JsonObject(emptyMap())
            val tags = (json["tags"] as? JsonArray)?.map { it.jsonPrimitive.content }.orEmpty()
            return EvalCase(id, input, expect, tags)
        }
    }
}
