package dev.trellis.runtime

/**
 * A checkpoint or snapshot cannot be loaded: corrupt JSON, another scope or format version, another graph,
 * an unknown schema version, or a state key the schema no longer has. Nothing of it was loaded.
 */
public class CheckpointFormatException @JvmOverloads constructor(
    message: String,
    cause: Throwable? = null,
) : IllegalStateException(message, cause)
