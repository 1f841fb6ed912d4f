package dev.trellis.graph.spec

import dev.trellis.graph.Graph
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.NodeError
import dev.trellis.graph.NodeRef
import dev.trellis.graph.StateKey

/** Loads a whole spec document: its format (migrated when older), its graphs in reference order, its main graph. */
internal object GraphLoader {
    private val GRAPH_FIELDS = setOf("description", "state", "start", "nodes", "edges", "config")
    private val CONFIG_FIELDS = setOf(
        "maxNodeExecutions",
        "executionTimeout",
        "maxConcurrency",
        "failFast",
        "defaultNodeTimeout",
        "defaultRetry",
        "interceptors",
        "defaultOnFailure",
    )

    fun load(text: String, label: String, registry: HandlerRegistry): Graph {
        val (root, syntax) = SpecTree.parse(text, label)
        if (root ==
            null
        ) {
            throw GraphSpecException(
                syntax.ifEmpty {
                    listOf(
                        SpecProblem("", 0, 0, "The spec '$label' is empty; write a document with format and graphs."),
                    )
                },
            )
        }
        val reader = SpecReader()
        val document = SpecMigrations.migrate(root, reader) ?: throw GraphSpecException(reader.problems)
        val obj = reader.obj(document, "The spec", setOf("format", "main", "graphs"), setOf("format", "graphs"))
            ?: throw GraphSpecException(reader.problems)
        val graphs = reader.entries(obj["graphs"], "graphs")
        if (obj["graphs"] != null && graphs.isEmpty() &&
            reader.problems.isEmpty()
        ) {
            reader.report(obj["graphs"]!!, "graphs is empty; declare at least one graph.")
        }
        if (graphs.size > SpecLimits.MAX_GRAPHS) {
            reader.report(
                obj["graphs"]!!,
                "The spec declares ${graphs.size} " +
                    "graphs; the limit is ${SpecLimits.MAX_GRAPHS}.",
            )
        }
        val mainName = obj["main"]?.let { reader.name(it, "main") } ?: graphs.singleOrNull()?.first?.text
        if (obj["main"] == null && graphs.size > 1) {
            reader.report(
                obj,
                "The spec declares ${graphs.size} graphs; " +
                    "say which one to load with main: <id>.",
            )
        }
        if (mainName != null && obj["main"] != null && graphs.none { it.first.text == mainName }) {
            reader.report(
                obj["main"]!!,
                "main names graph '$mainName', which graphs does not " +
                    "declare${SpecReader.suggest(mainName, graphs.map { it.first.text })}.",
            )
        }
        if (reader.problems.isNotEmpty()) throw GraphSpecException(reader.problems)
        val built = LinkedHashMap<String, Graph>()
        for ((id, def) in order(graphs, reader)) {
            val graph = loadGraph(id, def, registry, reader, built)
            if (graph != null) built[id.text] = graph
        }
        if (reader.problems.isNotEmpty()) {
            throw GraphSpecException(
                reader.problems.sortedWith(
                    compareBy({
                        it.line
                    }, { it.column }),
                ),
            )
        }
        return built.getValue(mainName!!)
    }

    /** The graphs, each after the graphs it references; a reference cycle is reported. */
    private fun order(
        graphs: List<Pair<SpecValue.Str, SpecValue>>,
        reader: SpecReader,
    ): List<Pair<SpecValue.Str, SpecValue>> {
        val byId = graphs.associate { it.first.text to it }
        val refs = graphs.associate { (id, def) -> id.text to references(def).filter { it.text in byId } }
        val done = LinkedHashSet<String>()
        val result = ArrayList<Pair<SpecValue.Str, SpecValue>>()
        val reported = HashSet<String>()

        fun visit(id: String, path: List<String>) {
            if (id in done) return
            if (id in path) {
                val cycle = path.drop(path.indexOf(id)) + id
                if (reported.add(cycle.toSortedSet().joinToString())) {
                    val at = refs.getValue(path.last()).first { it.text == id }
                    reader.report(
                        at,
                        "Graphs reference each other in a cycle (${cycle.joinToString(" -> ")}); a " +
                            "graph cannot contain itself, break the cycle.",
                    )
                }
                return
            }
            refs.getValue(id).forEach { visit(it.text, path + id) }
            if (done.add(id)) result += byId.getValue(id)
        }
        graphs.forEach { visit(it.first.text, emptyList()) }
        return if (reported.isEmpty()) result else emptyList()
    }

    private fun references(def: SpecValue): List<SpecValue.Str> {
        val nodes = (def as? SpecValue.Obj)?.get("nodes") as? SpecValue.Obj ?: return emptyList()
        return nodes.entries.mapNotNull { (_, node) ->
            val n = node as? SpecValue.Obj
            (
                (
                    n?.get(
                        "subgraph",
                    ) as? SpecValue.Obj
                )?.get("graph") ?: (n?.get("map") as? SpecValue.Obj)?.get("graph")
            ) as? SpecValue.Str
        }
    }

    private fun loadGraph(
        id: SpecValue.Str,
        def: SpecValue,
        registry: HandlerRegistry,
        reader: SpecReader,
        built: Map<String, Graph>,
    ): Graph? {
        val what = "Graph '${id.text}'"
        val before = reader.problems.size
        val obj = reader.obj(def, what, GRAPH_FIELDS, setOf("state", "start", "nodes")) ?: return null
        val broken = HashSet<String>()
        val schema = StateLoader.load(obj["state"], id.text, registry, reader, broken)
        val nodes = reader.entries(obj["nodes"], "$what: nodes")
        if (obj["nodes"] is SpecValue.Obj && nodes.isEmpty()) {
            reader.report(
                obj["nodes"]!!,
                "$what declares no " +
                    "nodes; add at least one.",
            )
        }
        if (schema == null) return null
        val cx = GraphContext(id.text, schema, registry, reader, built, nodes.map { it.first.text }.toSet(), broken)
        val builder = GraphBuilder(id.text, schema)
        nodes.forEach { (nodeId, node) -> NodeLoader.load(nodeId, node, builder, cx) }
        val start = reader.list(
            obj["start"],
            "$what: start",
        ).mapNotNull { cx.target(it, "$what: start", endAllowed = false) }
        if (obj["start"] is SpecValue.Arr && start.isEmpty() &&
            reader.problems.size == before
        ) {
            reader.report(obj["start"]!!, "$what: start is empty; name the node(s) that run first.")
        }
        builder.start(*start.map { NodeRef.of(it) }.toTypedArray())
        reader.list(obj["edges"], "$what: edges").forEachIndexed { i, edge -> EdgeLoader.load(edge, i, builder, cx) }
        config(obj["config"], builder, cx)
        if (reader.problems.size > before) return null
        return try {
            builder.build()
        } catch (e: GraphValidationException) {
            e.problems.forEach { problem ->
                val node = nodes.firstOrNull { (n, _) -> "'${n.text}'" in problem }
                reader.report(node?.first ?: id, "$what: $problem")
            }
            null
        }
    }

    private fun config(value: SpecValue?, builder: GraphBuilder, cx: GraphContext) {
        val reader = cx.reader
        val obj = reader.obj(value, "config", CONFIG_FIELDS) ?: return
        val interceptors = reader.list(obj["interceptors"], "config.interceptors").mapNotNull {
            cx.handler(it, "config.interceptors", cx.registry.interceptors, "interceptor")
        }
        val failure = reader.obj(
            obj["defaultOnFailure"],
            "config.defaultOnFailure",
            setOf("handler", "error"),
            setOf("handler"),
        )
        val handler = failure?.let { cx.target(it["handler"], "config.defaultOnFailure.handler", endAllowed = false) }
        val error = failure?.get("error")?.let { cx.key(it, "config.defaultOnFailure.error") }
        builder.config {
            reader.int(obj["maxNodeExecutions"], "config.maxNodeExecutions", min = 1)?.let { maxNodeExecutions = it }
            reader.duration(obj["executionTimeout"], "config.executionTimeout")?.let { executionTimeout = it }
            reader.int(obj["maxConcurrency"], "config.maxConcurrency", min = 1)?.let { maxConcurrency = it }
            reader.bool(obj["failFast"], "config.failFast")?.let { failFast = it }
            reader.duration(obj["defaultNodeTimeout"], "config.defaultNodeTimeout")?.let { defaultNodeTimeout = it }
            obj["defaultRetry"]?.let { cx.retry(it, "config.defaultRetry") }?.let { defaultRetry = it }
            if (interceptors.isNotEmpty()) intercept(*interceptors.toTypedArray())
            @Suppress("UNCHECKED_CAST")
            if (handler != null) defaultOnFailure(NodeRef.of(handler), error as StateKey<out NodeError?>?)
        }
    }
}
