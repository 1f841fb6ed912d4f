package dev.trellis.graph.spec

import org.snakeyaml.engine.v2.api.LoadSettings
import org.snakeyaml.engine.v2.api.lowlevel.Parse
import org.snakeyaml.engine.v2.events.AliasEvent
import org.snakeyaml.engine.v2.events.Event
import org.snakeyaml.engine.v2.events.MappingStartEvent
import org.snakeyaml.engine.v2.events.NodeEvent
import org.snakeyaml.engine.v2.events.ScalarEvent
import org.snakeyaml.engine.v2.events.SequenceStartEvent
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException
import org.snakeyaml.engine.v2.exceptions.YamlEngineException
import org.snakeyaml.engine.v2.nodes.Tag
import org.snakeyaml.engine.v2.resolver.JsonScalarResolver

/** A value of a spec document with its place: a JSON pointer and a 1-based line and column. */
internal sealed class SpecValue(val pointer: String, val line: Int, val column: Int) {
    /** A mapping; its entries keep their order and their duplicates (reported by the reader). */
    class Obj(pointer: String, line: Int, column: Int) : SpecValue(pointer, line, column) {
        val entries = ArrayList<Pair<Str, SpecValue>>()

        operator fun get(name: String): SpecValue? = entries.firstOrNull { it.first.text == name }?.second
    }

    class Arr(pointer: String, line: Int, column: Int) : SpecValue(pointer, line, column) {
        val items = ArrayList<SpecValue>()
    }

    /** A scalar: [text] as written; [kind] is what a plain scalar resolves to (quoted ones are strings). */
    class Str(pointer: String, line: Int, column: Int, val text: String, val kind: Kind) :
        SpecValue(pointer, line, column)

    enum class Kind { STRING, INT, FLOAT, BOOL, NULL }

    val what: String
        get() = when (this) {
            is Obj -> "a mapping"
            is Arr -> "a list"
            is Str -> if (kind == Kind.STRING) "the string \"$text\"" else "${kind.name.lowercase()} $text"
        }

    fun problem(message: String): SpecProblem = SpecProblem(pointer, line, column, message)
}

/** The bounds that keep a hostile document from exhausting the loader. */
internal object SpecLimits {
    const val MAX_CHARS: Int = 1 shl 20
    const val MAX_DEPTH: Int = 32
    const val MAX_GRAPHS: Int = 100
}

/** Reads YAML (and JSON, which is YAML's flow style) into [SpecValue]s without recursion, within [SpecLimits]. */
internal object SpecTree {
    private val resolver = JsonScalarResolver()

    fun parse(text: String, label: String): Pair<SpecValue?, List<SpecProblem>> {
        if (text.length > SpecLimits.MAX_CHARS) {
            return null to listOf(
                SpecProblem(
                    "",
                    0,
                    0,
                    "The spec '$label' has ${text.length} characters; the limit is ${SpecLimits.MAX_CHARS}. Split it " +
                        "into smaller graphs (subgraphs may be registered graphs) or check that this is the right " +
                        "file.",
                ),
            )
        }
        val settings = LoadSettings.builder().setLabel(label).setCodePointLimit(SpecLimits.MAX_CHARS + 1)
            .setMaxAliasesForCollections(0).build()
        return try {
            build(Parse(settings).parseString(text).iterator())
        } catch (e: MarkedYamlEngineException) {
            val mark = e.problemMark.orElse(null)
            null to listOf(
                SpecProblem(
                    "",
                    (mark?.line ?: -1) + 1,
                    (mark?.column ?: -1) + 1,
                    "The spec is not well-formed YAML or JSON: ${e.problem}; fix the syntax there.",
                ),
            )
        } catch (e: YamlEngineException) {
            null to listOf(SpecProblem("", 0, 0, "The spec is not well-formed YAML or JSON: ${e.message}."))
        }
    }

    private fun build(events: Iterator<Event>): Pair<SpecValue?, List<SpecProblem>> {
        val stack = ArrayList<SpecValue>()
        val pendingKey = ArrayList<SpecValue.Str?>()
        var root: SpecValue? = null
        while (events.hasNext()) {
            val event = events.next()
            val mark = event.startMark.orElse(null)
            val line = (mark?.line ?: -1) + 1
            val column = (mark?.column ?: -1) + 1
            if (event is AliasEvent || (event is NodeEvent && event.anchor.isPresent)) {
                return null to listOf(
                    SpecProblem(
                        pointer(stack, pendingKey),
                        line,
                        column,
                        "Anchors and aliases (&name, *name) are not allowed in a graph spec; write the value out.",
                    ),
                )
            }
            val value: SpecValue? = when (event) {
                is MappingStartEvent -> SpecValue.Obj(pointer(stack, pendingKey), line, column)
                is SequenceStartEvent -> SpecValue.Arr(pointer(stack, pendingKey), line, column)
                is ScalarEvent -> {
                    val kind = if (!event.isPlain || event.tag.isPresent) SpecValue.Kind.STRING else kindOf(event.value)
                    SpecValue.Str(pointer(stack, pendingKey), line, column, event.value, kind)
                }
                else -> null
            }
            when {
                value is SpecValue.Obj || value is SpecValue.Arr -> {
                    if (stack.size >= SpecLimits.MAX_DEPTH) {
                        return null to listOf(
                            value.problem(
                                "The spec nests values more than ${SpecLimits.MAX_DEPTH} levels deep; a graph spec " +
                                    "needs far fewer. Flatten the value (or move a nested graph to `graphs`).",
                            ),
                        )
                    }
                    attach(stack, pendingKey, value)
                    stack += value
                    pendingKey += null
                }
                value is SpecValue.Str -> {
                    val top = stack.lastOrNull()
                    if (top is SpecValue.Obj && pendingKey.last() == null) {
                        // A key: its pointer is its entry's.
                        pendingKey[pendingKey.size - 1] =
                            SpecValue.Str(top.pointer + "/" + escape(value.text), line, column, value.text, value.kind)
                    } else {
                        attach(stack, pendingKey, value)
                    }
                }
                event.eventId == Event.ID.MappingEnd || event.eventId == Event.ID.SequenceEnd -> {
                    val done = stack.removeAt(stack.size - 1)
                    pendingKey.removeAt(pendingKey.size - 1)
                    if (stack.isEmpty()) root = done
                }
            }
            if (stack.isEmpty() && value is SpecValue.Str && root == null) root = value
        }
        return root to emptyList()
    }

    private fun attach(stack: List<SpecValue>, pendingKey: MutableList<SpecValue.Str?>, value: SpecValue) {
        when (val top = stack.lastOrNull()) {
            is SpecValue.Obj -> {
                top.entries += pendingKey.last()!! to value
                pendingKey[pendingKey.size - 1] = null
            }
            is SpecValue.Arr -> top.items += value
            else -> Unit
        }
    }

    private fun pointer(stack: List<SpecValue>, pendingKey: List<SpecValue.Str?>): String =
        when (val top = stack.lastOrNull()) {
            null -> ""
            is SpecValue.Obj -> top.pointer + "/" + escape(pendingKey.last()?.text ?: "")
            is SpecValue.Arr -> top.pointer + "/" + top.items.size
            else -> top.pointer
        }

    private fun escape(segment: String): String = segment.replace("~", "~0").replace("/", "~1")

    private fun kindOf(text: String): SpecValue.Kind = when (resolver.resolve(text, true)) {
        Tag.INT -> SpecValue.Kind.INT
        Tag.FLOAT -> SpecValue.Kind.FLOAT
        Tag.BOOL -> SpecValue.Kind.BOOL
        Tag.NULL -> SpecValue.Kind.NULL
        else -> SpecValue.Kind.STRING
    }
}
