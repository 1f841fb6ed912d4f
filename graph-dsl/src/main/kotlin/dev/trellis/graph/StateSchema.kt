package dev.trellis.graph

import dev.trellis.graph.internal.requireCheckpointable
import kotlinx.serialization.KSerializer
import kotlinx.serialization.serializer
import kotlin.reflect.KClass
import kotlin.reflect.typeOf

/**
 * The set of typed keys a graph's state holds.
 *
 * Declare a schema as an object whose properties are its keys; each key gets a serializer inferred from
 * its type, so a state that cannot be checkpointed fails when the schema is declared, not at the first
 * checkpoint: a type without a serializer, or one that is (or holds) an interface or abstract class, whose
 * values' concrete classes no checkpoint could record (declare a sealed type instead). What only a value can
 * show — a serializer that writes but cannot read — is checked by the runtime on the first value written to
 * each key of a checkpointed run.
 *
 * ```kotlin
 * object Research : StateSchema("research", version = 1) {
 *     val question = key<String>("question")
 *     val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
 *     val drafts = key("drafts", default = 0)
 * }
 * ```
 *
 * Java callers create a schema with `new StateSchema("name")` and declare keys with the overloads that
 * take a serializer (the Jackson module provides serializers for Java types).
 *
 * @param name the schema's name; defaults to the class name.
 * @param version the schema version recorded in checkpoints, raised when keys change incompatibly.
 */
public open class StateSchema @JvmOverloads constructor(name: String? = null, public val version: Int = 1) {
    /** The schema's name, used in messages and checkpoints. */
    public val name: String = name ?: (this::class.simpleName ?: "State")

    private val declared = ArrayList<StateKey<*>>()
    private val byName = HashMap<String, StateKey<*>>()
    private val duplicates = LinkedHashMap<String, Int>()

    @Volatile
    private var frozen = false

    /** The keys of this schema in declaration order. */
    public val keys: List<StateKey<*>> get() = declared.toList()

    internal val keyCount: Int get() = declared.size

    /** The keys in declaration order, not copied (for the runtime's hot paths; never changed by the caller). */
    internal val declaredKeys: List<StateKey<*>> get() = declared

    /** Returns the key called [name], or null. */
    public fun keyOrNull(name: String): StateKey<*>? = byName[name]

    /** Declares a required key (no default): runs must provide its value in their input. */
    @JvmSynthetic
    public inline fun <reified T> key(name: String): StateKey<T> =
        key(name, serializer<T>(), classOf<T>(), isNullable<T>())

    /** Declares a key with a [default] and an optional [reducer]. */
    @JvmSynthetic
    public inline fun <reified T> key(name: String, default: T, reducer: Reducer<T>? = null): StateKey<T> =
        key(name, serializer<T>(), classOf<T>(), isNullable<T>(), default, reducer)

    /** Declares a required key with an explicit [serializer]; values must be instances of [valueClass]. */
    public fun <T> key(
        name: String,
        serializer: KSerializer<T>,
        valueClass: Class<*>,
        nullable: Boolean = false,
    ): StateKey<T> =
        register(name, serializer, valueClass, nullable, null, false, null)

    /** Declares a key with an explicit [serializer], a [default] and an optional [reducer]. */
    @JvmOverloads
    public fun <T> key(
        name: String,
        serializer: KSerializer<T>,
        valueClass: Class<*>,
        nullable: Boolean,
        default: T,
        reducer: Reducer<T>? = null,
    ): StateKey<T> = register(name, serializer, valueClass, nullable, default, true, reducer)

    private fun <T> register(
        name: String,
        serializer: KSerializer<T>,
        valueClass: Class<*>,
        nullable: Boolean,
        default: Any?,
        hasDefault: Boolean,
        reducer: Reducer<T>?,
    ): StateKey<T> = synchronized(declared) {
        check(!frozen) {
            "State schema '${this.name}' is already used by a built graph; declare key '$name' before building any graph with it."
        }
        requireCheckpointable(this.name, name, serializer)
        val key =
            StateKey(
                this,
                name,
                serializer,
                valueClass.kotlinBoxed(),
                nullable,
                default,
                hasDefault,
                reducer,
                declared.size,
            )
        require(!hasDefault || key.accepts(default)) {
            "The default of state key '$name' in schema '${this.name}' must be a ${key.typeName}, but was ${default?.javaClass?.name}."
        }
        if (byName.containsKey(name)) {
            duplicates[name] = (duplicates[name] ?: 1) + 1
        } else {
            byName[name] = key
        }
        declared += key
        key
    }

    internal fun duplicateKeyNames(): Map<String, Int> = duplicates

    internal fun freeze() {
        frozen = true
    }

    /** The state holding every key's default (keys without a default are unset). */
    public fun initialState(): State = State.initial(this)

    /**
     * Builds a state from values by key name, checking names and types.
     *
     * @throws IllegalArgumentException naming an unknown key (with the known ones) or a value of the wrong type.
     */
    public fun stateOf(values: Map<String, Any?>): State {
        var state = initialState()
        for ((name, value) in values) {
            val key = byName[name] ?: throw IllegalArgumentException(
                "Unknown state key '$name' for schema '${this.name}'. Known keys: ${declared.joinToString { it.name }}.",
            )
            @Suppress("UNCHECKED_CAST")
            state = state.with(key as StateKey<Any?>, key.cast(value))
        }
        return state
    }

    override fun toString(): String = "StateSchema($name, version=$version, keys=${declared.map { it.name }})"

    /** Helpers used by the inline key functions. */
    public companion object {
        /** The boxed Java class of [T]'s erasure. */
        @PublishedApi
        internal inline fun <reified T> classOf(): Class<*> =
            (typeOf<T>().classifier as? KClass<*>)?.javaObjectType ?: Any::class.java

        /** Whether [T] is a nullable type. */
        @PublishedApi
        internal inline fun <reified T> isNullable(): Boolean = typeOf<T>().isMarkedNullable
    }
}

private fun Class<*>.kotlinBoxed(): Class<*> = if (isPrimitive) kotlin.javaObjectType else this
