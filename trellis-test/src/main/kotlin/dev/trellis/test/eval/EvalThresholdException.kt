package dev.trellis.test.eval

/**
 * An evaluation fell short of its threshold (or regressed against a baseline). An [AssertionError], so it fails
 * a JUnit or kotest test, and with it the build; the message lists the failing cases.
 */
public class EvalThresholdException internal constructor(message: String) : AssertionError(message)
