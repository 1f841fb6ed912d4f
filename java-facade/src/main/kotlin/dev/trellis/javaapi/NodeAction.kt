package dev.trellis.javaapi

import java.util.concurrent.CompletionStage

/**
 * The body of a node of a [JavaGraph]: plain Java code.
 *
 * Declared with `node`, it must not block and runs inline on the run's own thread, like a Kotlin node. Declared
 * with `blockingNode`, it may block (I/O, a blocking client, locks, `Thread.sleep`) and runs on the graph's
 * executor; when the run is cancelled its thread is interrupted, so blocking calls end with
 * `InterruptedException` and the node ends `CANCELLED`. Any exception, checked ones included, fails the node (or is
 * retried, per its retry policy) and becomes the cause of the run's `GraphRunException`, as it is.
 *
 * ```java
 * builder.node("count", ctx -> ctx.update(count, c -> c + 1))
 *        .blockingNode("fetch", ctx -> ctx.set(page, http.get(ctx.get(url))));
 * ```
 */
public fun interface NodeAction {
    /** Runs one attempt of the node with [context]. */
    @Throws(Exception::class)
    public fun run(context: JavaNodeScope)
}

/**
 * The body of an async node of a [JavaGraph]: starts work and returns a [CompletionStage] that completes when it
 * is done. It is called on the run's own thread, so it must not block.
 *
 * When the run is cancelled, the returned stage is cancelled (if it is a `Future`). A stage completing
 * exceptionally fails the node with its exception (a `CompletionException` is unwrapped).
 *
 * ```java
 * builder.asyncNode("embed", ctx -> embedder.embedAsync(ctx.get(text)).thenAccept(v -> ctx.set(vector, v)));
 * ```
 */
public fun interface AsyncNodeAction {
    /** Starts one attempt of the node with [context]; the attempt ends when the returned stage completes. */
    @Throws(Exception::class)
    public fun run(context: JavaNodeScope): CompletionStage<*>
}
