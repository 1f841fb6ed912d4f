package dev.trellis.graph

/**
 * The writes of one attempt of a node, in the order they were made: what an interceptor's
 * [NodeChain.proceed] returns, and what an interceptor returns to the engine (`docs/semantics.md` §13).
 *
 * Immutable: [with], [without] and [map] return new writes. Writes to a key with a reducer are updates folded in
 * order when the node's writes are merged, exactly as the body's `set` calls are; writes to other keys replace the
 * value, the last one winning.
 *
 * ```kotlin
 * NodeInterceptor { chain -> chain.proceed().map(Research.notes) { notes -> notes.map(::redact) } }
 * ```
 */
public class NodeWrites private constructor(
    private val writeKeys: Array<StateKey<*>>,
    private val writeValues: Array<Any?>,
) {
    /** How many writes there are. */
    public val size: Int get() = writeKeys.size

    /** Whether there are none. */
    public fun isEmpty(): Boolean = writeKeys.isEmpty()

    /** The key of write [index], in write order. */
    public fun keyAt(index: Int): StateKey<*> = writeKeys[index]

    /** The value of write [index], in write order. */
    public fun valueAt(index: Int): Any? = writeValues[index]

    /** The keys written, in the order of their first write. */
    public val keys: Set<StateKey<*>> get() = writeKeys.toCollection(LinkedHashSet())

    /** Whether [key] is written. */
    public operator fun contains(key: StateKey<*>): Boolean = writeKeys.any { it == key }

    /** The last value written to [key] (for a key with a reducer, its last update), or null when it is not written. */
    public operator fun <T> get(key: StateKey<T>): T? {
        for (i in writeKeys.indices.reversed()) {
            @Suppress("UNCHECKED_CAST")
            if (writeKeys[i] == key) return writeValues[i] as T
        }
        return null
    }

    /** These writes followed by one more: [value] to [key]. */
    public fun <T> with(key: StateKey<T>, value: T): NodeWrites {
        val keys = writeKeys.copyOf(size + 1)
        keys[size] = key
        val values = writeValues.copyOf(size + 1)
        values[size] = value
        @Suppress("UNCHECKED_CAST")
        return NodeWrites(keys as Array<StateKey<*>>, values)
    }

    /** These writes without any write to [key]. */
    public fun without(key: StateKey<*>): NodeWrites {
        if (key !in this) return this
        val keep = writeKeys.indices.filter { writeKeys[it] != key }
        return NodeWrites(
            Array(keep.size) { writeKeys[keep[it]] },
            Array(keep.size) { writeValues[keep[it]] },
        )
    }

    /** These writes with every value written to [key] replaced by [transform] of it (e.g. to redact it). */
    public fun <T> map(key: StateKey<T>, transform: (T) -> T): NodeWrites {
        if (key !in this) return this
        val values = writeValues.copyOf()
        for (i in writeKeys.indices) {
            @Suppress("UNCHECKED_CAST")
            if (writeKeys[i] == key) values[i] = transform(values[i] as T)
        }
        return NodeWrites(writeKeys, values)
    }

    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is NodeWrites && writeKeys.contentEquals(other.writeKeys) &&
                    writeValues.contentEquals(other.writeValues)
            )

    override fun hashCode(): Int = writeKeys.contentHashCode() * 31 + writeValues.contentHashCode()

    override fun toString(): String =
        writeKeys.indices.joinToString(
            prefix = "NodeWrites(",
            postfix = ")",
        ) { "${writeKeys[it].name}=${writeValues[it]}" }

    /** Factories. */
    public companion object {
        /** No writes. */
        @JvmField
        public val EMPTY: NodeWrites = NodeWrites(emptyArray(), emptyArray())

        /** One write: [value] to [key]. */
        @JvmStatic
        public fun <T> of(key: StateKey<T>, value: T): NodeWrites = EMPTY.with(key, value)

        /** The writes [keys]`[i]` = [values]`[i]`; the engine's way to build them without copies. */
        @InternalTrellisApi
        public fun wrap(keys: Array<StateKey<*>>, values: Array<Any?>): NodeWrites {
            require(keys.size == values.size) { "NodeWrites.wrap: ${keys.size} keys but ${values.size} values." }
            return if (keys.isEmpty()) EMPTY else NodeWrites(keys, values)
        }
    }
}
