package dev.trellis.graph

/**
 * An immutable snapshot of a graph's state: a value for each key of its [schema].
 *
 * Reading a key returns its value, or its default when it was never written; reading a key that has
 * neither fails with a message naming the key. Every key also carries a version that the runtime raises
 * on each write, which is how it detects conflicting writes (see `docs/semantics.md`).
 *
 * ```kotlin
 * val input = stateOf(Research.question to "Why is the sky blue?")
 * val question: String = input[Research.question]
 * ```
 */
public class State private constructor(
    /** The schema this state belongs to. */
    public val schema: StateSchema,
    private val values: Array<Any?>,
    /**
     * The version of each key: an `IntArray` while every version fits one (half the bytes of a copy per merge), else
     * a `LongArray`. Never changed once the state is made.
     */
    private val versions: Any,
) {
    /** Returns the value of [key]. */
    public operator fun <T> get(key: StateKey<T>): T {
        checkKey(key)
        val value = values[key.index]
        if (value === Unset) {
            checkReadable(key)
            throw NoSuchElementException(
                "State key '${key.name}' of schema '${schema.name}' has no value and no default. " +
                    "Give it a value in the run's input, or declare it with a default.",
            )
        }
        @Suppress("UNCHECKED_CAST")
        return value as T
    }

    /** Returns the value of [key], or null when it has no value and no default. */
    public fun <T> getOrNull(key: StateKey<T>): T? {
        checkKey(key)
        val value = values[key.index]
        if (value === Unset) {
            checkReadable(key)
            return null
        }
        @Suppress("UNCHECKED_CAST")
        return value as T
    }

    /** Whether [key] has a value (written, given in the input, or a default). */
    public fun contains(key: StateKey<*>): Boolean {
        checkKey(key)
        if (values[key.index] !== Unset) return true
        checkReadable(key)
        return false
    }

    /** Returns a copy of this state with [key] set to [value]; reducers are not applied. */
    public fun <T> with(key: StateKey<T>, value: T): State {
        checkKey(key)
        val copy = values.copyOf()
        copy[key.index] = key.cast(value)
        return State(schema, copy, versions)
    }

    /** The values of every key that has one, by key name, in declaration order. */
    public fun toMap(): Map<String, Any?> {
        val map = LinkedHashMap<String, Any?>()
        for (key in schema.keys) {
            val value = values[key.index]
            if (value !== Unset) map[key.name] = value
        }
        return map
    }

    /** The version of [key]: 0 until the first write during a run, then raised on each write. */
    public fun versionOf(key: StateKey<*>): Long {
        checkKey(key)
        if (values[key.index] === Unset) checkReadable(key)
        return versionAt(key.index)
    }

    /** The raw value of [key], [Unset] when absent. For the runtime. */
    @InternalTrellisApi
    public fun getOrUnset(key: StateKey<*>): Any? {
        checkKey(key)
        return values[key.index]
    }

    /** The raw value at key position [index], [Unset] when absent. For the runtime's merge loop. */
    @InternalTrellisApi
    public fun valueAt(index: Int): Any? = values[index]

    /** The version at key position [index]. For the runtime's merge loop. */
    @InternalTrellisApi
    public fun versionAt(index: Int): Long {
        val v = versions
        return if (v is IntArray) v[index].toLong() else (v as LongArray)[index]
    }

    /** A copy of the value array, to be changed and wrapped by [fromArrays]. */
    @InternalTrellisApi
    public fun copyValues(): Array<Any?> = values.copyOf()

    /** A copy of the version array, to be changed and wrapped by [fromArrays]. */
    @InternalTrellisApi
    public fun copyVersions(): LongArray {
        val v = versions
        return if (v is IntArray) LongArray(v.size) { v[it].toLong() } else (v as LongArray).copyOf()
    }

    /**
     * A copy of the version array in which versions up to [highest] can be set ([setVersion]), to be wrapped by
     * [fromVersions]. For the runtime's merge loop: the copy is compact (4 bytes per key) while versions fit.
     */
    @InternalTrellisApi
    public fun copyVersions(highest: Long): Any {
        val v = versions
        return when {
            highest > Int.MAX_VALUE -> copyVersions()
            v is IntArray -> v.copyOf()
            else -> (v as LongArray).let { longs -> IntArray(longs.size) { longs[it].toInt() } }
        }
    }

    /**
     * A view of this state for a node with a read slice ([NodeSlice.view]): keys for which [readable] (of a key
     * index) is false look absent, and reading one throws what [violation] returns. The view is marked by one
     * extra slot at the end of its value array holding its [ReadGuard], so that a plain state carries no field
     * for it and its reads pay nothing: the guard is consulted only on the path of a key without a value.
     */
    @InternalTrellisApi
    public fun readView(readable: (Int) -> Boolean, violation: (StateKey<*>) -> Throwable): State {
        val count = keyCount
        val copy = arrayOfNulls<Any?>(count + 1)
        for (i in 0 until count) copy[i] = if (readable(i)) values[i] else Unset
        copy[count] = ReadGuard(readable, violation)
        return State(schema, copy, versions)
    }

    /** On a read view, throws when [key] is outside the read slice; a plain state has no guard slot. */
    private fun checkReadable(key: StateKey<*>) {
        val count = keyCount
        if (values.size == count) return
        val guard = values[count] as ReadGuard
        if (!guard.readable(key.index)) throw guard.violation(key)
    }

    private val keyCount: Int get() = schema.keyCount

    private class ReadGuard(val readable: (Int) -> Boolean, val violation: (StateKey<*>) -> Throwable)

    private fun checkKey(key: StateKey<*>) {
        require(key.schema === schema) {
            "State key '${key.name}' belongs to schema '${key.schema.name}', not to this state's schema '${schema.name}'."
        }
    }

    override fun equals(other: Any?): Boolean =
        this === other || (other is State && other.schema === schema && other.values.contentEquals(values))

    override fun hashCode(): Int = 31 * System.identityHashCode(schema) + values.contentHashCode()

    override fun toString(): String = "State(${schema.name}, ${toMap()})"

    /** Marker of a key without a value; only the runtime sees it. */
    @InternalTrellisApi
    public object Unset {
        override fun toString(): String = "<unset>"
    }

    /** Factories. */
    public companion object {
        internal fun initial(schema: StateSchema): State {
            val values = initialValues(schema)
            return State(schema, values, IntArray(values.size))
        }

        /** The values of [schema]'s initial state: each key's default, or [Unset]. */
        internal fun initialValues(schema: StateSchema): Array<Any?> {
            val keys = schema.declaredKeys
            val values = arrayOfNulls<Any?>(keys.size)
            for (i in keys.indices) {
                val key = keys[i]
                values[key.index] = if (key.hasDefault) key.default else Unset
            }
            return values
        }

        /** Wraps arrays the caller owns and never changes again. For the runtime's merge loop. */
        @InternalTrellisApi
        @JvmStatic
        public fun fromArrays(schema: StateSchema, values: Array<Any?>, versions: LongArray): State {
            require(values.size == schema.keyCount && versions.size == values.size) {
                "State arrays of size ${values.size}/${versions.size} do not match schema '${schema.name}' with ${schema.keyCount} keys."
            }
            return State(schema, values, versions)
        }

        /** Sets the version at key position [index] of a copy made by [copyVersions] (of a highest version). */
        @InternalTrellisApi
        @JvmStatic
        public fun setVersion(versions: Any, index: Int, version: Long) {
            if (versions is IntArray) versions[index] = version.toInt() else (versions as LongArray)[index] = version
        }

        /** Wraps [values] and [versions] (made by [copyVersions]) that the caller never changes again. For the merge. */
        @InternalTrellisApi
        @JvmStatic
        public fun fromVersions(schema: StateSchema, values: Array<Any?>, versions: Any): State {
            val count = if (versions is IntArray) versions.size else (versions as LongArray).size
            require(values.size == schema.keyCount && count == values.size) {
                "State arrays of size ${values.size}/$count do not match schema '${schema.name}' with ${schema.keyCount} keys."
            }
            return State(schema, values, versions)
        }
    }
}

/**
 * Builds an input state from key-value pairs, checking each value's type against its key.
 *
 * All keys must belong to one schema; keys not given keep their defaults.
 *
 * ```kotlin
 * research.invoke(stateOf(Research.question to "Why is the sky blue?"))
 * ```
 */
public fun stateOf(vararg values: Pair<StateKey<*>, Any?>): State {
    require(values.isNotEmpty()) {
        "stateOf() needs at least one key to know its schema; use schema.initialState() for a state of defaults."
    }
    val schema = values[0].first.schema
    var state = schema.initialState()
    for ((key, value) in values) {
        @Suppress("UNCHECKED_CAST")
        state = state.with(key as StateKey<Any?>, value)
    }
    return state
}
