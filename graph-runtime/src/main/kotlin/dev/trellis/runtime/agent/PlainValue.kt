package dev.trellis.runtime.agent

/**
 * A plain value class: equal to another of the same class with equal [properties], hashed by them and printed as
 * `Name(a=1, b=2)`. The base of the agent modules' values (messages, tool calls, handoffs): plain classes rather than
 * data classes, whose `copy` and `componentN` would be API.
 */
public abstract class PlainValue protected constructor() {
    /** The properties, by name and in order, that equality, the hash code and the text form use. */
    protected abstract fun properties(): List<Pair<String, Any?>>

    final override fun equals(other: Any?): Boolean =
        other === this || (other is PlainValue && other.javaClass == javaClass && other.properties() == properties())

    final override fun hashCode(): Int = properties().hashCode()

    final override fun toString(): String =
        properties().joinToString(
            prefix = "${javaClass.simpleName}(",
            postfix = ")",
        ) { (name, value) -> "$name=$value" }
}
