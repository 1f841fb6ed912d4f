package dev.trellis.checkpoint.jdbc

import kotlinx.serialization.builtins.MapSerializer
import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.json.Json

/** Stores a checkpoint's metadata as one JSON object of strings. */
internal object MetadataCodec {
    private val serializer = MapSerializer(String.serializer(), String.serializer())

    fun encode(metadata: Map<String, String>): String =
        if (metadata.isEmpty()) EMPTY else Json.encodeToString(serializer, metadata)

    private const val EMPTY = "{}"

    fun decode(text: String): Map<String, String> = Json.decodeFromString(serializer, text)
}
