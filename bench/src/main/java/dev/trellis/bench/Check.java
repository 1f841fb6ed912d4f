package dev.trellis.bench;

/** Sanity checks run once per trial, so that a benchmark never measures a graph that does the wrong thing. */
final class Check {
    private Check() {}

    static void equal(String what, Object expected, Object actual) {
        if (!expected.equals(actual)) {
            throw new IllegalStateException(what + ": expected " + expected + " but was " + actual);
        }
    }
}
