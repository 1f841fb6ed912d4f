package dev.trellis.graph

import kotlinx.serialization.KSerializer

/**
 * A typed key of a graph's state, declared in a [StateSchema].
 *
 * A key has a [name], a [serializer] used to checkpoint its value, an optional default and an optional
 * [reducer]. Keys are equal when they belong to the same schema and have the same name.
 *
 * ```kotlin
 * object Research : StateSchema() {
 *     val question = key<String>("question")                                          // required
 *     val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
 * }
 * ```
 */
public class StateKey<T> internal constructor(
    /** The schema that declares this key. */
    public val schema: StateSchema,
    /** The key's name, unique within its schema. */
    public val name: String,
    /** The serializer that turns values of this key into JSON for checkpoints and snapshots. */
    public val serializer: KSerializer<T>,
    /** The Java class values of this key must be instances of (the erasure of `T`, boxed). */
    public val valueClass: Class<*>,
    /** Whether a null value is allowed. */
    public val nullable: Boolean,
    private val defaultValue: Any?,
    /** Whether the key has a default; a key without one must be given a value in the run's input. */
    public val hasDefault: Boolean,
    /** The reducer that folds writes into the value, or null for last-writer-wins with a conflict check. */
    public val reducer: Reducer<T>?,
    /** The position of this key in its schema, used by the runtime to index state arrays. */
    @property:InternalTrellisApi public val index: Int,
) {
    /** The default value; fails with a message naming the key when it has none. */
    @Suppress("UNCHECKED_CAST")
    public val default: T
        get() {
            require(hasDefault) { "State key '$name' of schema '${schema.name}' has no default value." }
            return defaultValue as T
        }

    /** A readable name of the value type, for error messages. */
    public val typeName: String
        get() = serializer.descriptor.serialName.removeSuffix("?") + if (nullable) "?" else ""

    /** Whether [value] is an acceptable value of this key (its class and nullability). */
    public fun accepts(value: Any?): Boolean = if (value == null) nullable else valueClass.isInstance(value)

    /**
     * Checks that [value] is acceptable for this key and returns it typed.
     *
     * @throws IllegalArgumentException naming the key, the expected type and the type given.
     */
    @Suppress("UNCHECKED_CAST")
    public fun cast(value: Any?): T {
        require(accepts(value)) {
            val given = if (value == null) "null" else value.javaClass.name
            "State key '$name' of schema '${schema.name}' holds values of type $typeName, but was given $given. " +
                "Pass a value of type $typeName."
        }
        return value as T
    }

    override fun equals(other: Any?): Boolean =
        this === other || (other is StateKey<*> && other.schema === schema && other.name == name)

    override fun hashCode(): Int = 31 * System.identityHashCode(schema) + name.hashCode()

    override fun toString(): String = "StateKey(${schema.name}.$name: $typeName)"
}
