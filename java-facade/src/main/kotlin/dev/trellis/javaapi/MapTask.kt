package dev.trellis.javaapi

/**
 * The body of one task of a map node of a [JavaGraph]: plain Java code run once per item of the map's list, with
 * the map's [JavaNodeScope] (its reads see the state the map started with; its writes are the task's, merged in task
 * order with the other tasks').
 *
 * Declared with `map`, it must not block and runs inline on the run's own thread, like a `node`. Declared with
 * `blockingMap`, it may block and runs on the graph's executor, like a `blockingNode`. An exception, checked ones
 * included, fails the task (or is retried, per the map's retry policy); the map's `MapOptions` say whether a failed
 * task fails the map or is collected.
 *
 * ```java
 * builder.map("summarize", docs, (ctx, doc) -> ctx.set(summaries, List.of(summarize(doc))));
 * ```
 */
public fun interface MapTask<T> {
    /** Runs one attempt of the task on [item] with [context]. */
    @Throws(Exception::class)
    public fun run(context: JavaNodeScope, item: T)
}
