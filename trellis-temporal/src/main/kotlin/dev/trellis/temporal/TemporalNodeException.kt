package dev.trellis.temporal

/**
 * A node's failure on a Temporal activity worker, as the workflow sees it: [type] is the class name of the exception
 * the node's body threw (or `PayloadTooLarge`, `UnknownGraph`), the message is its message. Trellis's retry policy
 * and error routes see this exception, not the original one (it does not cross the activity boundary).
 */
public class TemporalNodeException(
    /** The class name of the node's exception, or the kind of the activity's failure. */
    public val type: String,
    message: String,
) : RuntimeException(message)
