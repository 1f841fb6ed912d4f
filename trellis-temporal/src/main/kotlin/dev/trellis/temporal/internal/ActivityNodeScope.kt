package dev.trellis.temporal.internal

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Node
import dev.trellis.graph.NodeScope
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.State
import dev.trellis.graph.StateKey

/**
 * The [NodeScope] of a node body run by the activity worker, with the local runtime's rules and errors
 * (`docs/semantics.md` §12, the runtime's node scope): reads and writes outside the node's slice throw a
 * [SliceViolationException] that fails the attempt even when the body catches it; a write of a value of the wrong
 * type, a key of another schema, `update` of a key with a reducer and a bad charge throw the runtime's
 * [IllegalArgumentException]s, word for word. [input] holds only the node's read slice.
 */
@OptIn(InternalTrellisApi::class)
internal class ActivityNodeScope(
    override val runId: String,
    private val node: Node,
    override val attempt: Int,
    override val executionCount: Int,
    private val input: State,
    /** The answer to this attempt's interrupt, taken by its first `interrupt` call. */
    private var answer: String?,
    /** How many payloads earlier calls of this attempt emitted (before it asked): the index of this call's first. */
    private val firstIndex: Int,
    /** Called with each payload the body emits and its index in this attempt (the live side channel). */
    private val onEmit: (index: Int, payload: Any) -> Unit,
) : NodeScope {
    override val nodeId: String get() = node.id
    val keys = ArrayList<StateKey<*>>()
    val values = ArrayList<Any?>()

    /** The charges, in order: meter and amount. */
    val charges = ArrayList<Pair<String, Double>>()
    val emitted = ArrayList<Any>()

    /** A slice violation of the body: the attempt's failure even when the body caught it. */
    var violation: SliceViolationException? = null
        private set

    /** The last error this scope threw for a refused write or charge (the runtime's own checks). */
    var refusal: IllegalArgumentException? = null
        private set

    override val state: State = node.slice?.view(input, node.id) { violation = it } ?: input

    private fun violated(e: SliceViolationException): SliceViolationException {
        violation = e
        return e
    }

    private inline fun refuse(ok: Boolean, message: () -> String) {
        if (!ok) throw IllegalArgumentException(message()).also { refusal = it }
    }

    override fun <T> get(key: StateKey<T>): T {
        node.slice?.readViolation(node.id, key)?.let { throw violated(it) }
        var value: Any? = input.getOrUnset(key)
        val reducer = key.reducer
        for (i in keys.indices) {
            if (keys[i] != key) continue
            @Suppress("UNCHECKED_CAST")
            value =
                if (reducer == null || value === State.Unset) values[i] else reducer.reduce(value as T, values[i] as T)
        }
        if (value === State.Unset) return input[key] // throws with the key's name
        @Suppress("UNCHECKED_CAST")
        return value as T
    }

    override fun <T> set(key: StateKey<T>, value: T) {
        refuse(key.schema === input.schema) {
            "Node '${node.id}' wrote key '${key.name}' of schema '${key.schema.name}', but this graph's schema is '${input.schema.name}'."
        }
        node.slice?.writeViolation(node.id, key)?.let { throw violated(it) }
        refuse(key.accepts(value)) {
            val given = if (value == null) "null" else "a value of type ${value.javaClass.name}"
            "Node '${node.id}' wrote $given to state key '${key.name}', which holds values of type " +
                "${key.typeName}; the " +
                "write was refused and the node failed. Write a value of type ${key.typeName}" +
                (if (value == null) " (or declare the key nullable)." else ".")
        }
        keys += key
        values += value
    }

    override fun <T> update(key: StateKey<T>, transform: (T) -> T) {
        refuse(key.reducer == null) {
            "update() replaces a value, but state key '${key.name}' has reducer ${key.reducer}; use set(${key.name}, update) to fold an update into it."
        }
        set(key, transform(get(key)))
    }

    override suspend fun emit(payload: Any) {
        onEmit(firstIndex + emitted.size, payload)
        emitted += payload
    }

    override fun charge(meter: String, amount: Double) {
        refuse(meter.isNotBlank()) {
            "Node '${node.id}' charged a meter with a blank name; name the meter, e.g. \"tokens\"."
        }
        refuse(amount.isFinite() && amount >= 0.0) {
            "Node '${node.id}' charged $amount to meter '$meter'; a charge must be finite and not negative " +
                "(totals only grow)."
        }
        charges += meter to amount
    }

    override fun interrupt(payload: String): String {
        val given = answer ?: throw ActivityInterrupt(payload)
        answer = null
        return given
    }
}

/** Thrown by [ActivityNodeScope.interrupt] without an answer: the activity answers the interrupt's payload. */
internal class ActivityInterrupt(val payload: String) :
    RuntimeException("The node asked for input: $payload", null, false, false)
