package dev.trellis.graph.internal

import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.descriptors.PolymorphicKind
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.capturedKClass
import kotlinx.serialization.descriptors.elementDescriptors

/**
 * Checks, when key [keyName] of schema [schemaName] is declared, what can be known of its [serializer] without a
 * value: that no part of the key's type is an interface or abstract class (open polymorphism). Checkpoints are
 * written with a JSON format that registers no polymorphic subclasses, so such a value could be written by no
 * checkpoint. A sealed type is fine (its subclasses are known), and so is a recursive one.
 *
 * What only a value shows (a serializer that can write but not read) is checked by the runtime, on the first value
 * written to each key of a checkpointed run.
 *
 * @throws IllegalArgumentException naming the key, the abstract type and what to do instead.
 */
internal fun requireCheckpointable(schemaName: String, keyName: String, serializer: KSerializer<*>) {
    val root = serializer.descriptor
    val open = openPolymorphism(root) ?: return
    val base = open.baseName()
    val where = if (open === root) {
        "is of type $base"
    } else {
        "is of type ${root.serialName.removeSuffix("?")}, which holds $base"
    }
    throw IllegalArgumentException(
        "State key '$keyName' of schema '$schemaName' $where, an interface or abstract class: a checkpoint must " +
            "record " +
            "each value's concrete class, which Trellis's JSON format cannot (it registers no subclasses), so " +
            "the run would " +
            "fail at its first checkpoint. Declare the key with a sealed interface or class, or a concrete " +
            "@Serializable " +
            "class, or give it a serializer that writes and reads the concrete values itself.",
    )
}

/** The first descriptor of open polymorphism reachable from [root], or null; each descriptor is looked at once. */
@OptIn(ExperimentalSerializationApi::class)
private fun openPolymorphism(root: SerialDescriptor): SerialDescriptor? {
    val seen = HashSet<SerialDescriptor>()
    val pending = ArrayDeque<SerialDescriptor>()
    pending.addLast(root)
    while (pending.isNotEmpty()) {
        val descriptor = pending.removeFirst()
        if (!seen.add(descriptor)) continue
        if (descriptor.kind == PolymorphicKind.OPEN) return descriptor
        for (element in descriptor.elementDescriptors) pending.addLast(element)
    }
    return null
}

/** The abstract class of an open polymorphic descriptor, by its qualified name when known. */
@OptIn(ExperimentalSerializationApi::class)
private fun SerialDescriptor.baseName(): String = capturedKClass?.qualifiedName ?: serialName
