package dev.trellis.graph.spec

import dev.trellis.graph.Graph
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema

/** What loading one graph of a spec needs: its schema, the registry, the graphs it may reference, its node ids. */
internal class GraphContext(
    val id: String,
    val schema: StateSchema,
    val registry: HandlerRegistry,
    val reader: SpecReader,
    /** The graphs of the document built so far, by id; registered graphs are looked up in [registry]. */
    val built: Map<String, Graph>,
    /** The ids of the graph's nodes. */
    val nodeIds: Set<String>,
    /** The keys whose declaration has problems (already reported): naming one reports nothing more. */
    val brokenKeys: Set<String> = emptySet(),
) {
    /** The key [value] names, or null after reporting it. */
    fun key(value: SpecValue?, what: String, schema: StateSchema = this.schema): StateKey<Any?>? {
        val name = reader.name(value, what) ?: return null
        @Suppress("UNCHECKED_CAST")
        return schema.keyOrNull(name) as StateKey<Any?>? ?: run {
            if (schema === this.schema && name in brokenKeys) return null
            reader.report(
                value!!,
                "$what names key '$name', which schema '${schema.name}' does not " +
                    "declare${SpecReader.suggest(name, schema.keys.map { it.name })}; declare it under state.keys or " +
                    "fix the name.",
            )
            null
        }
    }

    /** The node id (or `END`, as [Graph.END]) [value] names, or null after reporting it. */
    fun target(value: SpecValue?, what: String, endAllowed: Boolean): String? {
        val name = reader.name(value, what) ?: return null
        if (name == "END" && endAllowed) return Graph.END
        if (name !in nodeIds) {
            val end = if (endAllowed) " or END" else ""
            reader.report(
                value!!,
                "$what names node '$name', which graph '$id' does not " +
                    "declare${SpecReader.suggest(name, nodeIds)}; use one of ${nodeIds.joinToString()}$end.",
            )
            return null
        }
        return name
    }

    /** The graph [value] references: one of the document's, or a registered one. */
    fun graph(value: SpecValue?, what: String): Graph? {
        val name = reader.name(value, what) ?: return null
        return built[name] ?: registry.graphs[name] ?: run {
            val hint = SpecReader.suggest(name, built.keys + registry.graphs.keys)
            reader.report(
                value!!,
                "$what references graph '$name', which is neither in this spec's graphs nor registered$hint; " +
                    "add it under graphs or register it with graph(...).",
            )
            null
        }
    }

    /** The handler of kind [kind] that [value] names in [map], or null after reporting it. */
    fun <T> handler(value: SpecValue?, what: String, map: Map<String, T>, kind: String): T? {
        val name = reader.name(value, what) ?: return null
        return map[name] ?: run {
            reader.report(
                value!!,
                "$what: no $kind is registered as '$name'${SpecReader.suggest(name, map.keys)}; " +
                    "register it with $kind(\"$name\", ...) " +
                    "(registered: ${map.keys.joinToString().ifEmpty { "none" }}).",
            )
            null
        }
    }

    /** The retry policy [value] describes. */
    fun retry(value: SpecValue?, what: String): Retry? {
        val obj =
            reader.obj(
                value,
                what,
                setOf("maxAttempts", "backoff", "initialDelay", "maxDelay", "multiplier", "jitter", "retryOn"),
                setOf("maxAttempts"),
            )
                ?: return null
        val before = reader.problems.size
        val attempts = reader.int(obj["maxAttempts"], "$what: maxAttempts", min = 1) ?: 1
        val backoff = obj["backoff"]?.let { reader.oneOf(it, "$what: backoff", BACKOFFS) } ?: Retry.Backoff.FIXED
        val initial = reader.duration(obj["initialDelay"], "$what: initialDelay", allowZero = true)
        val max = reader.duration(obj["maxDelay"], "$what: maxDelay", allowZero = true)
        val multiplier = reader.double(obj["multiplier"], "$what: multiplier")
        val jitter = reader.double(obj["jitter"], "$what: jitter")
        val filter = obj["retryOn"]?.let { handler(it, "$what: retryOn", registry.retryFilters, "retryOn") }
        if (reader.problems.size > before) return null
        return try {
            var retry = when (backoff) {
                Retry.Backoff.FIXED -> Retry.fixed(attempts, initial ?: Retry.fixed(1).initialDelay).let {
                    r ->
                    max?.let { r.withMaxDelay(it) }
                        ?: r
                }
                Retry.Backoff.LINEAR -> Retry.linear(attempts, initial ?: DEFAULT.initialDelay, max ?: DEFAULT.maxDelay)
                Retry.Backoff.EXPONENTIAL -> Retry.exponential(
                    attempts,
                    initial ?: DEFAULT.initialDelay,
                    multiplier ?: DEFAULT.multiplier,
                    max ?: DEFAULT.maxDelay,
                )
            }
            if (jitter != null) retry = retry.withJitter(jitter)
            if (filter != null) retry = retry.retryOn(filter)
            retry
        } catch (e: IllegalArgumentException) {
            reader.report(obj, "$what: ${e.message}")
            null
        }
    }

    companion object {
        val BACKOFFS = mapOf(
            "fixed" to Retry.Backoff.FIXED,
            "linear" to Retry.Backoff.LINEAR,
            "exponential" to Retry.Backoff.EXPONENTIAL,
        )
        private val DEFAULT = Retry.exponential()
    }
}
