package dev.trellis.graph.spec

import dev.trellis.graph.Graph
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.longOrNull
import org.snakeyaml.engine.v2.api.Dump
import org.snakeyaml.engine.v2.api.DumpSettings
import org.snakeyaml.engine.v2.common.FlowStyle
import java.nio.file.Files
import java.nio.file.Path

/**
 * Graphs as data: loads a graph from a YAML or JSON spec, with its handlers looked up in a [HandlerRegistry], and
 * writes a built graph back as a spec (`docs/graph-spec.md`).
 *
 * Loading checks the whole document and reports every problem at once in a [GraphSpecException], each with its line,
 * column and JSON pointer and what to do. It never loads a class by name: a spec only runs registered code.
 *
 * ```kotlin
 * val graph = GraphSpec.load(Path.of("research.yaml"), registry)
 * val yaml = GraphSpec.toYaml(graph, registry) // the same graph, as data again
 * ```
 */
public object GraphSpec {
    /** The format version this library writes; older formats load through a migration. */
    public const val FORMAT: Int = 1

    /** The largest spec, in characters, that [load] reads (1 MiB). */
    public const val MAX_CHARS: Int = SpecLimits.MAX_CHARS

    /** The deepest nesting of values (mappings and lists) [load] reads. */
    public const val MAX_DEPTH: Int = SpecLimits.MAX_DEPTH

    private val json = Json { prettyPrint = true }

    /**
     * Loads the main graph of the spec [text] (YAML, or JSON), its handlers from [registry]; [label] names the
     * spec in messages.
     *
     * @throws GraphSpecException listing every problem of the spec.
     */
    @JvmStatic
    @JvmOverloads
    public fun load(text: String, registry: HandlerRegistry, label: String = "spec"): Graph =
        GraphLoader.load(text, label, registry)

    /** Loads the main graph of the spec file [path]; a file larger than [MAX_CHARS] bytes is refused unread. */
    @JvmStatic
    public fun load(path: Path, registry: HandlerRegistry): Graph {
        val size = Files.size(path)
        if (size > MAX_CHARS) {
            throw GraphSpecException(
                listOf(
                    SpecProblem(
                        "",
                        0,
                        0,
                        "The spec file $path has $size bytes; the limit is $MAX_CHARS. Check " +
                            "that it is a graph spec, or split it.",
                    ),
                ),
            )
        }
        return load(Files.readString(path), registry, path.fileName.toString())
    }

    /**
     * The spec of [graph] as YAML: every node body, condition, selector, reducer and policy it holds must be
     * registered in [registry] (the very object), or made by the loader.
     *
     * @throws GraphSpecException listing everything the spec cannot name.
     */
    @JvmStatic
    public fun toYaml(graph: Graph, registry: HandlerRegistry): String {
        val settings = DumpSettings.builder().setDefaultFlowStyle(FlowStyle.BLOCK).setWidth(120).build()
        return Dump(settings).dumpToString(plain(SpecExport(registry).document(graph)))
    }

    /** The spec of [graph] as JSON; see [toYaml]. */
    @JvmStatic
    public fun toJson(graph: Graph, registry: HandlerRegistry): String =
        json.encodeToString(JsonElement.serializer(), SpecExport(registry).document(graph))

    /** The JSON Schema of the spec format (draft 2020-12), as published in this jar and in `docs/graph-spec.md`. */
    @JvmStatic
    public fun jsonSchema(): String =
        GraphSpec::class.java.getResourceAsStream("graph-spec.schema.json")!!.use { String(it.readAllBytes()) }

    private fun plain(element: JsonElement): Any? = when (element) {
        is JsonObject -> element.mapValuesTo(LinkedHashMap()) { plain(it.value) }
        is JsonArray -> element.map(::plain)
        is JsonNull -> null
        is JsonPrimitive -> when {
            element.isString -> element.content
            element.booleanOrNull != null -> element.booleanOrNull
            element.longOrNull != null -> element.longOrNull
            else -> element.content.toDouble()
        }
    }
}
