package dev.trellis.graph.spec

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeError
import dev.trellis.graph.NodeRef
import dev.trellis.graph.State
import dev.trellis.graph.StateKey

/**
 * Reads the `edges` of a graph: plain (`to`), conditional (`to` + `when`), routes by a named selector (`route` +
 * `targets`), first-match rules (`firstMatch` + `otherwise`) and error routes (`onFailure` + `error`).
 */
internal object EdgeLoader {
    private val FIELDS =
        setOf("from", "to", "when", "route", "targets", "firstMatch", "otherwise", "onFailure", "error")
    private val SHAPES = listOf("to", "route", "firstMatch", "onFailure")

    fun load(edge: SpecValue, index: Int, builder: GraphBuilder, cx: GraphContext) {
        val reader = cx.reader
        val what = "Edge ${index + 1}"
        val obj = reader.obj(edge, what, FIELDS, setOf("from")) ?: return
        val shapes = SHAPES.filter { obj[it] != null }
        if (shapes.size != 1) {
            reader.report(
                obj,
                "$what must have exactly one of 'to', 'route', 'firstMatch' or " +
                    "'onFailure'${if (shapes.isEmpty()) "" else " (it has ${shapes.joinToString()})"}.",
            )
            return
        }
        val allowed = when (shapes[0]) {
            "to" -> setOf("from", "to", "when")
            "route" -> setOf("from", "route", "targets")
            "firstMatch" -> setOf("from", "firstMatch", "otherwise")
            else -> setOf("from", "onFailure", "error")
        }
        obj.entries.filter { it.first.text in FIELDS && it.first.text !in allowed }.forEach { (key, _) ->
            reader.report(
                key,
                "$what: '${key.text}' does not go with '${shapes[0]}'; remove it (a ${shapes[0]} " +
                    "edge takes ${allowed.joinToString()}).",
            )
        }
        val before = reader.problems.size
        val from = cx.target(obj["from"], "$what: from", endAllowed = false)
        val from0 = from?.let { NodeRef.of(it) }
        when (shapes[0]) {
            "to" -> {
                val to = cx.target(obj["to"], "$what: to", endAllowed = true)
                val condition = obj["when"]?.let { condition(it, "$what: when", cx) }
                if (reader.problems.size > before || from0 == null || to == null) return
                with(builder) {
                    if (condition ==
                        null
                    ) {
                        from0 then NodeRef.of(to)
                    } else {
                        from0.then(NodeRef.of(to), condition)
                    }
                }
            }
            "route" -> {
                val selector = cx.handler(obj["route"], "$what: route", cx.registry.selectors, "selector")
                val targets = obj["targets"]?.let {
                    t ->
                    reader.list(t, "$what: targets").mapNotNull { cx.target(it, "$what: targets", endAllowed = true) }
                }
                if (targets == null) {
                    reader.report(
                        obj,
                        "$what: a route needs 'targets', every node (or END) its " +
                            "selector may pick.",
                    )
                }
                if (reader.problems.size > before || from0 == null || selector == null || targets == null) return
                with(builder) { from0.route(*targets.map { NodeRef.of(it) }.toTypedArray(), selector = selector) }
            }
            "firstMatch" -> {
                val branches = reader.list(obj["firstMatch"], "$what: firstMatch").mapIndexedNotNull { i, b ->
                    val branch =
                        reader.obj(b, "$what: firstMatch[$i]", setOf("to", "when"), setOf("to", "when"))
                            ?: return@mapIndexedNotNull null
                    val to = cx.target(branch["to"], "$what: firstMatch[$i].to", endAllowed = true)
                    val cond = branch["when"]?.let { condition(it, "$what: firstMatch[$i].when", cx) }
                    if (to == null || cond == null) null else to to cond
                }
                if (obj["firstMatch"] is SpecValue.Arr && (obj["firstMatch"] as SpecValue.Arr).items.isEmpty()) {
                    reader.report(obj["firstMatch"]!!, "$what: firstMatch needs at least one {to, when} branch.")
                }
                val otherwise = obj["otherwise"]?.let { cx.target(it, "$what: otherwise", endAllowed = true) }
                if (reader.problems.size > before || from0 == null) return
                with(builder) {
                    from0.firstMatch {
                        branches.forEach { (to, cond) -> on(NodeRef.of(to), cond) }
                        if (otherwise == null) otherwiseFail() else otherwise(NodeRef.of(otherwise))
                    }
                }
            }
            else -> {
                val handler = cx.target(obj["onFailure"], "$what: onFailure", endAllowed = false)
                val error = obj["error"]?.let { cx.key(it, "$what: error") }
                if (error != null && error.valueClass != NodeError::class.java) {
                    reader.report(
                        obj["error"]!!,
                        "$what: error must name a key of type NodeError?, but " +
                            "'${error.name}' holds ${error.typeName}.",
                    )
                }
                if (reader.problems.size > before || from0 == null || handler == null) return
                @Suppress("UNCHECKED_CAST")
                with(builder) { from0.onFailure(NodeRef.of(handler), error as StateKey<out NodeError?>?) }
            }
        }
    }

    /** A registered condition by name, or a declarative rule. */
    fun condition(value: SpecValue, what: String, cx: GraphContext): ((State) -> Boolean)? =
        if (value is SpecValue.Str) {
            cx.handler(value, what, cx.registry.conditions, "condition")
        } else {
            Rules.compile(value, cx.schema, cx.reader, cx.brokenKeys)?.let { Origins.record(it, Rules.toJson(value)) }
        }
}
