package dev.trellis.graph.spec

import dev.trellis.graph.CachePolicy
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeRef
import dev.trellis.graph.StateKey
import dev.trellis.graph.TaskFailure
import dev.trellis.graph.TaskInput
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject

/** Reads the `nodes` of a graph into its builder: handler, interrupt, subgraph and map nodes with their options. */
internal object NodeLoader {
    val KINDS = listOf("handler", "interrupt", "subgraph", "map")
    private val COMMON =
        setOf("description", "timeout", "retry", "cache", "reads", "writes", "interceptors", "compensation")
    private val FAILURES = mapOf("failFast" to TaskFailure.FAIL_FAST, "collect" to TaskFailure.COLLECT)

    fun load(id: SpecValue.Str, def: SpecValue, builder: GraphBuilder, cx: GraphContext) {
        val reader = cx.reader
        val what = "Node '${id.text}'"
        val obj = reader.obj(def, what, COMMON + KINDS) ?: return
        val kinds = KINDS.filter { obj[it] != null }
        if (kinds.size != 1) {
            reader.report(
                obj,
                "$what must have exactly one of " +
                    "${KINDS.joinToString()}" +
                    (if (kinds.isEmpty()) "" else " (it has ${kinds.joinToString()})") + "; keep one.",
            )
            return
        }
        val before = reader.problems.size
        val description = reader.string(obj["description"], "$what: description")
        val timeout = reader.duration(obj["timeout"], "$what: timeout")
        val retry = obj["retry"]?.let { cx.retry(it, "$what: retry") }
        val cache = reader.obj(obj["cache"], "$what: cache", setOf("key", "ttl"), setOf("key"))?.let { c ->
            val key = cx.handler(c["key"], "$what: cache.key", cx.registry.cacheKeys, "cacheKey")
            val ttl = reader.duration(c["ttl"], "$what: cache.ttl")
            key?.let { CachePolicy(it, ttl) }
        }
        val reads = obj["reads"]?.let { keys(it, "$what: reads", cx) }
        val writes = obj["writes"]?.let { keys(it, "$what: writes", cx) }
        val interceptors = reader.list(obj["interceptors"], "$what: interceptors").mapNotNull {
            cx.handler(it, "$what: interceptors", cx.registry.interceptors, "interceptor")
        }
        val compensation = obj["compensation"]?.let {
            cx.handler(it, "$what: compensation", cx.registry.compensations, "compensation")
        }
        if (kinds[0] != "handler" && (reads != null || writes != null)) {
            reader.report(
                obj,
                "$what: reads and writes are for handler nodes (a ${kinds[0]} node's slice follows " +
                    "from its mapping); remove them.",
            )
        }
        val ref: NodeRef? = when (kinds[0]) {
            "handler" -> cx.handler(obj["handler"], "$what: handler", cx.registry.nodes, "node")?.let { body ->
                if (reader.problems.size >
                    before
                ) {
                    null
                } else {
                    builder.node(id.text, timeout, retry, description, reads, writes, cache, body)
                }
            }
            "interrupt" -> interrupt(obj["interrupt"]!!, what, cx)?.let { body ->
                if (reader.problems.size >
                    before
                ) {
                    null
                } else {
                    builder.node(id.text, timeout, retry, description, null, null, cache, body)
                }
            }
            "subgraph" -> subgraph(
                id.text,
                obj["subgraph"]!!,
                builder,
                cx,
                Options(timeout, retry, description, cache),
                before,
            )
            else -> map(id.text, obj["map"]!!, builder, cx, Options(timeout, retry, description, cache), before)
        }
        if (ref != null) {
            with(builder) {
                if (interceptors.isNotEmpty()) ref.intercept(*interceptors.toTypedArray())
                compensation?.let { ref.compensate(it) }
            }
        }
    }

    private class Options(
        val timeout: kotlin.time.Duration?,
        val retry: dev.trellis.graph.Retry?,
        val description: String?,
        val cache: CachePolicy?,
    )

    private fun keys(value: SpecValue, what: String, cx: GraphContext): Set<StateKey<*>> =
        cx.reader.list(value, what).mapNotNull { cx.key(it, what) }.toSet()

    private fun interrupt(value: SpecValue, what: String, cx: GraphContext): NodeBody? {
        val obj =
            cx.reader.obj(value, "$what: interrupt", setOf("ask", "answer"), setOf("ask", "answer")) ?: return null
        val ask = cx.reader.string(obj["ask"], "$what: interrupt.ask") ?: return null
        val answer = cx.key(obj["answer"], "$what: interrupt.answer") ?: return null
        if (answer.valueClass != String::class.java) {
            cx.reader.report(
                obj["answer"]!!,
                "$what: interrupt.answer must be a key of type string (the answer), " +
                    "but '${answer.name}' holds ${answer.typeName}.",
            )
            return null
        }
        val body: NodeBody = { set(answer, interrupt(ask)) }
        return Origins.record(
            body,
            buildJsonObject {
                put("ask", JsonPrimitive(ask))
                put("answer", JsonPrimitive(answer.name))
            },
        )
    }

    private fun subgraph(
        id: String,
        value: SpecValue,
        builder: GraphBuilder,
        cx: GraphContext,
        o: Options,
        before: Int,
    ): NodeRef? {
        val what = "Node '$id': subgraph"
        val obj = cx.reader.obj(value, what, setOf("graph", "inputs", "outputs"), setOf("graph")) ?: return null
        val child = cx.graph(obj["graph"], "$what.graph") ?: return null
        val inputs = pairs(obj["inputs"], "$what.inputs", cx, cx.schema, child.schema)
        val outputs = pairs(obj["outputs"], "$what.outputs", cx, child.schema, cx.schema)
        if (cx.reader.problems.size > before) return null
        return builder.subgraph(id, child, o.timeout, o.retry, o.description, o.cache) {
            inputs.forEach { (from, to) -> input(from, to) }
            outputs.forEach { (from, to) -> output(from, to) }
        }
    }

    private fun map(
        id: String,
        value: SpecValue,
        builder: GraphBuilder,
        cx: GraphContext,
        o: Options,
        before: Int,
    ): NodeRef? {
        val what = "Node '$id': map"
        val reader = cx.reader
        val obj =
            reader.obj(
                value,
                what,
                setOf(
                    "over",
                    "handler",
                    "graph",
                    "item",
                    "inputs",
                    "outputs",
                    "maxConcurrency",
                    "onTaskFailure",
                    "errors",
                ),
                setOf("over"),
            )
                ?: return null
        val over = cx.key(obj["over"], "$what.over") ?: return null
        if (!List::class.java.isAssignableFrom(over.valueClass)) {
            reader.report(obj["over"]!!, "$what.over must name a list key, but '${over.name}' holds ${over.typeName}.")
        }
        val maxConcurrency = reader.int(obj["maxConcurrency"], "$what.maxConcurrency", min = 1) ?: Int.MAX_VALUE
        val failure =
            obj["onTaskFailure"]?.let { reader.oneOf(it, "$what.onTaskFailure", FAILURES) } ?: TaskFailure.FAIL_FAST

        @Suppress("UNCHECKED_CAST")
        val errors = obj["errors"]?.let { cx.key(it, "$what.errors") } as StateKey<List<dev.trellis.graph.TaskError>>?

        @Suppress("UNCHECKED_CAST")
        val list = over as StateKey<out List<Any?>>
        if ((obj["handler"] == null) == (obj["graph"] == null)) {
            reader.report(
                obj,
                "$what must have exactly one of 'handler' (a registered task) or 'graph' (a child " +
                    "graph per item).",
            )
            return null
        }
        if (obj["handler"] != null) {
            listOf("item", "inputs", "outputs").filter { obj[it] != null }.forEach {
                reader.report(
                    obj[it]!!,
                    "$what.$it is for maps whose tasks are graphs; a task handler gets the " +
                        "item itself, remove it.",
                )
            }
            val task = cx.handler(obj["handler"], "$what.handler", cx.registry.tasks, "task") ?: return null
            if (reader.problems.size > before) return null
            return builder.map(
                id,
                list,
                maxConcurrency,
                failure,
                errors,
                o.timeout,
                o.retry,
                o.description,
                o.cache,
                task,
            )
        }
        val child = cx.graph(obj["graph"], "$what.graph") ?: return null
        val itemKey = obj["item"]?.let { cx.key(it, "$what.item", child.schema) }
        val inputs = pairs(obj["inputs"], "$what.inputs", cx, cx.schema, child.schema)
        val outputs = pairs(obj["outputs"], "$what.outputs", cx, child.schema, cx.schema)
        if (reader.problems.size > before) return null
        val itemBlock: (TaskInput<Any?>.() -> Unit)? = itemKey?.let { key ->
            val block: TaskInput<Any?>.() -> Unit = { set(key, item) }
            Origins.record(block, JsonPrimitive(key.name))
        }
        return builder.map(
            id,
            list,
            child,
            maxConcurrency,
            failure,
            errors,
            o.timeout,
            o.retry,
            o.description,
            o.cache,
        ) {
            inputs.forEach { (from, to) -> input(from, to) }
            itemBlock?.let { input(it) }
            outputs.forEach { (from, to) -> output(from, to) }
        }
    }

    /** `{from: to}` key pairs, `from` in [fromSchema] and `to` in [toSchema], of the same type. */
    private fun pairs(
        value: SpecValue?,
        what: String,
        cx: GraphContext,
        fromSchema: dev.trellis.graph.StateSchema,
        toSchema: dev.trellis.graph.StateSchema,
    ): List<Pair<StateKey<Any?>, StateKey<Any?>>> = cx.reader.entries(value, what).mapNotNull { (from, to) ->
        val a = cx.key(from, what, fromSchema)
        val b = cx.key(to, what, toSchema)
        if (a != null && b != null && a.typeName != b.typeName) {
            cx.reader.report(
                to,
                "$what maps '${a.name}' (${a.typeName}) to '${b.name}' (${b.typeName}); map keys " +
                    "of the same type.",
            )
            null
        } else if (a != null && b != null) {
            a to b
        } else {
            null
        }
    }
}
