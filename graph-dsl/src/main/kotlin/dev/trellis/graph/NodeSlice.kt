package dev.trellis.graph

import java.util.Collections

/**
 * The keys a node declares it reads and writes (`docs/semantics.md` §12). Each half is optional: a null [reads]
 * or [writes] is undeclared and unrestricted; an empty set allows nothing. A node's slice is enforced on every
 * read and write of its body (a [SliceViolationException] fails the node) and lets `Graph.validate()` and
 * `build()` find nodes that can run in parallel and write the same key without a reducer.
 *
 * ```kotlin
 * node("summarize", reads = setOf(Doc.text), writes = setOf(Doc.summary)) {
 *     set(Doc.summary, get(Doc.text).take(200))
 * }
 * ```
 */
public class NodeSlice(
    reads: Set<StateKey<*>>?,
    writes: Set<StateKey<*>>?,
) {
    /** The keys the node may read, or null when it declared none (it may read any key). */
    public val reads: Set<StateKey<*>>? = reads?.let { Collections.unmodifiableSet(LinkedHashSet(it)) }

    /** The keys the node may write, or null when it declared none (it may write any key). */
    public val writes: Set<StateKey<*>>? = writes?.let { Collections.unmodifiableSet(LinkedHashSet(it)) }

    private val readBits: LongArray? = this.reads?.let(::bits)
    private val writeBits: LongArray? = this.writes?.let(::bits)

    /** Whether the node may read [key]. */
    public fun allowsRead(key: StateKey<*>): Boolean = reads?.contains(key) ?: true

    /** Whether the node may write [key]. */
    public fun allowsWrite(key: StateKey<*>): Boolean = writes?.contains(key) ?: true

    /**
     * The violation of node [nodeId] reading [key], or null when its slice allows it; for the runtime's node scopes.
     * A bit test by key index: the key's schema is checked by the state it is read from (and slices by `build()`).
     */
    @InternalTrellisApi
    public fun readViolation(nodeId: String, key: StateKey<*>): SliceViolationException? {
        val bits = readBits ?: return null
        return if (has(
                bits,
                key.index,
            )
        ) {
            null
        } else {
            SliceViolationException(nodeId, key, SliceViolationException.Access.READ, reads!!)
        }
    }

    /** The violation of node [nodeId] writing [key], or null when its slice allows it; for the runtime's node scopes. */
    @InternalTrellisApi
    public fun writeViolation(nodeId: String, key: StateKey<*>): SliceViolationException? {
        val bits = writeBits ?: return null
        return if (has(
                bits,
                key.index,
            )
        ) {
            null
        } else {
            SliceViolationException(nodeId, key, SliceViolationException.Access.WRITE, writes!!)
        }
    }

    /**
     * The view of [state] that node [nodeId]'s body is handed as `NodeScope.state`: [state] itself when the read
     * half is undeclared, else a state in which reading a key outside [reads] calls [onViolation] with the
     * violation, then throws it.
     */
    @InternalTrellisApi
    public fun view(state: State, nodeId: String, onViolation: (SliceViolationException) -> Unit): State {
        val bits = readBits ?: return state
        val reads = reads!!
        return state.readView({ has(bits, it) }) { key ->
            SliceViolationException(nodeId, key, SliceViolationException.Access.READ, reads).also(onViolation)
        }
    }

    override fun equals(other: Any?): Boolean =
        this === other || (other is NodeSlice && other.reads == reads && other.writes == writes)

    override fun hashCode(): Int = 31 * reads.hashCode() + writes.hashCode()

    override fun toString(): String = "NodeSlice(reads=${names(reads)}, writes=${names(writes)})"

    internal companion object {
        fun names(keys: Set<StateKey<*>>?): String = keys?.joinToString(prefix = "[", postfix = "]") { it.name } ?: "*"

        private fun bits(keys: Set<StateKey<*>>): LongArray {
            val max = keys.maxOfOrNull { it.index } ?: -1
            val bits = LongArray((max + 64) ushr 6)
            for (key in keys) bits[key.index ushr 6] = bits[key.index ushr 6] or (1L shl (key.index and 63))
            return bits
        }

        private fun has(bits: LongArray, index: Int): Boolean {
            val word = index ushr 6
            return word < bits.size && (bits[word] and (1L shl (index and 63))) != 0L
        }
    }
}

/**
 * A node read or wrote a state key outside its declared slice ([NodeSlice], `docs/semantics.md` §12). A programming
 * error: it fails the node's execution (even when the body catches it) and is never retried.
 */
public class SliceViolationException(
    /** The node that broke its slice. */
    public val nodeId: String,
    /** The key it read or wrote. */
    public val key: StateKey<*>,
    /** Whether it was a read or a write. */
    public val access: Access,
    /** The keys the node declared for that access. */
    public val declared: Set<StateKey<*>>,
) : IllegalStateException(
        "Node '$nodeId' ${if (access == Access.READ) "read" else "wrote"} state key '${key.name}', which is not in " +
            "its declared ${access.half} ${NodeSlice.names(
                declared,
            )}. Add '${key.name}' to the node's ${access.half} " +
            "(Kotlin: node(\"$nodeId\", ${access.half} = setOf(...)); " +
            "Java: NodeOptions.with${access.half.replaceFirstChar(Char::uppercaseChar)}(...)), " +
            "or stop ${if (access == Access.READ) "reading" else "writing"} it.",
    ) {
    /** The kind of access that broke the slice. */
    public enum class Access(internal val half: String) {
        /** A read: `get`, `state[...]`, or the read of `update`. */
        READ("reads"),

        /** A write: `set`, or the write of `update`. */
        WRITE("writes"),
    }
}
