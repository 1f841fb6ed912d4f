package dev.trellis.test.model

/**
 * A scripted model got a call its script has no answer for. The message names the call's number and its prompt,
 * and what the script answers.
 */
public class UnscriptedCallException internal constructor(
    /** The call's number, from 1. */
    public val callNumber: Int,
    /** The call's prompt: the text of its last user message. */
    public val prompt: String,
    message: String,
) : IllegalStateException(message)
