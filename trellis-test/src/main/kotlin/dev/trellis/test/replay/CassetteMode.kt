package dev.trellis.test.replay

import java.nio.file.Files
import java.nio.file.Path

/**
 * Whether a [Cassette] calls the real model and tools and records them, or replays what it recorded.
 *
 * The mode is usually read from the environment ([fromEnvironment]): the system property `trellis.cassette`, else
 * the environment variable `TRELLIS_CASSETTE`, `record`, `replay` or `auto` (the default).
 */
public enum class CassetteMode {
    /** Calls the real model and tools and writes a new cassette, replacing the old one: re-recording. */
    RECORD,

    /** Answers from the cassette only; a call that is not in it fails, naming the first divergent request. */
    REPLAY,

    /** Replays when the cassette file exists, else records it. */
    AUTO,
    ;

    /** The mode a cassette at [path] runs in: [AUTO] resolved to [RECORD] or [REPLAY]. */
    public fun resolve(path: Path): CassetteMode = when (this) {
        AUTO -> if (Files.exists(path)) REPLAY else RECORD
        else -> this
    }

    /** Reads the mode from the environment. */
    public companion object {
        /** The system property naming the mode (it wins over [VARIABLE]). */
        public const val PROPERTY: String = "trellis.cassette"

        /** The environment variable naming the mode. */
        public const val VARIABLE: String = "TRELLIS_CASSETTE"

        /** The mode [PROPERTY] or [VARIABLE] names, [AUTO] when neither is set; fails naming a wrong value. */
        @JvmStatic
        public fun fromEnvironment(): CassetteMode = parse(System.getProperty(PROPERTY) ?: System.getenv(VARIABLE))

        /** The mode [value] names (`record`, `replay` or `auto`, any case; blank or null is [AUTO]). */
        @JvmStatic
        public fun parse(value: String?): CassetteMode {
            if (value.isNullOrBlank()) return AUTO
            return entries.firstOrNull { it.name.equals(value.trim(), ignoreCase = true) }
                ?: throw IllegalArgumentException(
                    "Cassette mode '$value' (from -D$PROPERTY or $VARIABLE) is not one of record, replay, auto; " +
                        "set one of those.",
                )
        }
    }
}
