package dev.trellis.test.replay

/**
 * A replayed call is not in the cassette: the graph's calls changed since it was recorded. The message names the
 * call, shows the first recorded request of the same kind that was not replayed next to this one (a diff of
 * expected against actual), and says how to re-record.
 */
public class CassetteMismatchException internal constructor(message: String) : AssertionError(message)

/** A recorded call had failed; replaying it fails the same way, with the recorded error's [type] and message. */
public class RecordedFailureException internal constructor(
    /** The class name of the error the real call threw. */
    public val type: String,
    message: String?,
) : RuntimeException("$type: $message")
