package dev.trellis.graph.spec

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement

/**
 * Reads a graph's `state` section: the schema registered under its name (whose keys the section must declare as they
 * are), or a new schema with the declared keys.
 */
internal object StateLoader {
    private val json = Json

    /**
     * The schema of a graph's [state] section, or null when the section is unusable; a schema with problems is still
     * returned (with the keys that are fine, their names added to [broken] otherwise) so that the rest of the graph is
     * checked too.
     */
    fun load(
        state: SpecValue?,
        graphId: String,
        registry: HandlerRegistry,
        reader: SpecReader,
        broken: MutableSet<String>,
    ): StateSchema? {
        val what = "The state of graph '$graphId'"
        val obj = reader.obj(state, what, setOf("schema", "version", "keys"), setOf("keys")) ?: return null
        val name = reader.name(obj["schema"], "state.schema") ?: graphId
        val version = reader.int(obj["version"], "state.version", min = 1) ?: 1
        val registered = registry.schemas[name]
        val keys = reader.entries(obj["keys"], "state.keys")
        val fresh = if (registered == null) StateSchema(name, version) else null
        for ((keyName, def) in keys) {
            val before = reader.problems.size
            declare(keyName, def, fresh, registered, registry, reader)
            if (reader.problems.size > before) broken += keyName.text
        }
        if (registered != null) {
            if (obj["version"] != null && registered.version != version) {
                reader.report(
                    obj["version"]!!,
                    "state.version is $version, but the registered schema '$name' has " +
                        "version ${registered.version}; write ${registered.version}.",
                )
            }
            val declared = keys.map { it.first.text }.toSet()
            val missing = registered.keys.map { it.name }.filter { it !in declared }
            if (missing.isNotEmpty()) {
                reader.report(
                    obj["keys"]!!,
                    "state.keys does not declare $missing of the registered schema " +
                        "'$name'; declare every key of the schema.",
                )
            }
        }
        return registered ?: fresh
    }

    private fun declare(
        name: SpecValue.Str,
        def: SpecValue,
        fresh: StateSchema?,
        registered: StateSchema?,
        registry: HandlerRegistry,
        reader: SpecReader,
    ) {
        val what = "State key '${name.text}'"
        val obj = reader.obj(def, what, setOf("type", "default", "reducer"), setOf("type")) ?: return
        if (name.text.isBlank() || name.text.startsWith("__")) {
            reader.report(name, "$what: a key name must not be blank nor start with \"__\" (reserved); rename it.")
            return
        }
        val typeText = reader.string(obj["type"], "$what: type") ?: return
        val type = SpecTypes.parse(typeText, registry).getOrElse {
            reader.report(obj["type"]!!, "$what: ${it.message}.")
            return
        }
        val reducer = obj["reducer"]?.let { value ->
            val reducerName = reader.name(value, "$what: reducer") ?: return
            registry.reducers[reducerName] ?: run {
                reader.report(
                    value,
                    "$what: no reducer is registered as " +
                        "'$reducerName'${SpecReader.suggest(reducerName, registry.reducers.keys)}; register it with " +
                        "reducer(\"$reducerName\", ...) or use one of ${registry.reducers.keys}.",
                )
                return
            }
        }
        val default = obj["default"]?.let { value ->
            decode(type, Rules.toJson(value)).getOrElse {
                reader.report(
                    value,
                    "$what: the default is not of type ${type.name} " +
                        "(${it.message?.lineSequence()?.first()}); write a ${type.name} value.",
                )
                return
            }
        }
        if (registered != null) {
            check(name, obj, type, reducer, default, registered, registry, reader)
            return
        }
        @Suppress("UNCHECKED_CAST")
        val r = reducer as Reducer<Any?>?
        try {
            if (obj["default"] == null) {
                if (reducer != null) {
                    reader.report(
                        obj["reducer"]!!,
                        "$what has a reducer but no default; a reducer folds writes " +
                            "into a value, so give it a default.",
                    )
                    return
                }
                fresh!!.key(name.text, type.serializer, type.valueClass, type.nullable)
            } else {
                fresh!!.key(name.text, type.serializer, type.valueClass, type.nullable, default, r)
            }
        } catch (e: IllegalArgumentException) {
            reader.report(name, "$what: ${e.message}")
        }
    }

    private fun check(
        name: SpecValue.Str,
        obj: SpecValue.Obj,
        type: SpecType,
        reducer: Reducer<*>?,
        default: Any?,
        schema: StateSchema,
        registry: HandlerRegistry,
        reader: SpecReader,
    ) {
        val what = "State key '${name.text}'"
        val key = schema.keyOrNull(name.text) ?: run {
            reader.report(
                name,
                "$what is not a key of the registered schema '${schema.name}' (keys " +
                    "${schema.keys.map { it.name }}); remove it or add it to the schema.",
            )
            return
        }
        val actualType = SpecTypes.nameOf(key, registry)
        if (actualType != type.name) {
            reader.report(
                obj["type"]!!,
                "$what has type ${actualType ?: key.typeName} in the registered schema " +
                    "'${schema.name}'; write type: ${actualType ?: "(register a codec for ${key.typeName})"}.",
            )
        }
        if (key.reducer !== reducer) {
            val expected = key.reducer?.let { registry.nameOf(it) }
            val has = when {
                expected != null -> "reducer $expected"
                key.reducer == null -> "no reducer"
                else -> "an unregistered reducer"
            }
            val fix = if (expected != null) "write reducer: $expected." else "match the schema."
            reader.report(obj["reducer"] ?: obj, "$what has $has in the registered schema '${schema.name}'; $fix")
        }
        if (key.hasDefault != (obj["default"] != null) || (key.hasDefault && key.default != default)) {
            val has = if (key.hasDefault) "default ${encode(key)}" else "no default"
            val fix = if (key.hasDefault) "write default: ${encode(key)}." else "remove the default."
            reader.report(obj["default"] ?: obj, "$what has $has in the registered schema '${schema.name}'; $fix")
        }
    }

    fun decode(type: SpecType, value: JsonElement): Result<Any?> =
        runCatching { json.decodeFromJsonElement(type.serializer, value) }

    fun encode(key: StateKey<*>): JsonElement {
        @Suppress("UNCHECKED_CAST")
        val k = key as StateKey<Any?>
        return json.encodeToJsonElement(k.serializer, k.default)
    }
}
