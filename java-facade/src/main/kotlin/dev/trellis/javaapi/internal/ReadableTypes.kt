package dev.trellis.javaapi.internal

import dev.trellis.graph.StateSchema
import dev.trellis.jackson.JacksonSerializer
import tools.jackson.core.JacksonException
import tools.jackson.databind.JavaType
import tools.jackson.databind.deser.AbstractDeserializer
import tools.jackson.databind.deser.ValueInstantiator

/**
 * Checks, when a Java state key is declared, that Jackson's default mapper can read values of [type] back from a
 * checkpoint, as far as the type alone shows: an interface or abstract class without type information
 * (`@JsonTypeInfo`), or a class Jackson has no way to create (no default constructor, no creator), anywhere in
 * the type's containers. Properties of bean types are not followed: what only a value shows is checked by the
 * runtime, on the first value written to each key of a checkpointed run.
 *
 * @throws IllegalArgumentException naming the key, the type and what to do.
 */
internal fun requireReadable(schema: StateSchema, name: String, type: JavaType) {
    val problem = unreadable(type) ?: return
    throw IllegalArgumentException(
        "State key '$name' of schema '${schema.name}' holds values of type ${type.toCanonical()}, which Jackson " +
            "cannot read " +
            "back from a checkpoint: $problem The run would save checkpoints that can never be loaded.",
    )
}

/** Why Jackson cannot read [type], or null; containers (lists, maps, `Optional`) are looked into. */
private fun unreadable(type: JavaType): String? {
    type.contentType?.let { content -> return unreadable(content) }
    val deserializer = try {
        JacksonSerializer.defaultMapper()._deserializationContext().findRootValueDeserializer(type)
    } catch (e: JacksonException) {
        return "${type.rawClass.name}: ${e.originalMessage}."
    }
    if (deserializer is AbstractDeserializer) {
        return "${type.rawClass.name} is an interface or abstract class without type information. Declare the key " +
            "with a concrete class, or annotate the type with @JsonTypeInfo and @JsonSubTypes so that checkpoints " +
            "record each value's class."
    }
    if (deserializer is ValueInstantiator.Gettable && deserializer.valueInstantiator?.canInstantiate() == false) {
        return "Jackson has no way to create a ${type.rawClass.name} (no default constructor, no creator). Make it a " +
            "record, or annotate a constructor or factory with @JsonCreator (naming its parameters with @JsonProperty)."
    }
    return null
}
