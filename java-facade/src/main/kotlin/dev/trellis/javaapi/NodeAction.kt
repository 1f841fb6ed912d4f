package dev.trellis.javaapi

import java.util.concurrent.CompletionStage

/**
 * The body of a blocking node of a [JavaGraph]: plain Java code run on the graph's executor.
 *
 * It may block (I/O, locks, `Thread.sleep`); when the run is cancelled the thread is interrupted, so
 * blocking calls end with `InterruptedException` and the node ends `CANCELLED`. Any exception fails the
 * node (or is retried, per its retry policy) and becomes the cause of the run's `GraphRunException`.
 *
 * ```java
 * builder.node("fetch", ctx -> ctx.set(page, http.get(ctx.get(url))));
 * ```
 */
public fun interface NodeAction {
    /** Runs one attempt of the node with [context]. */
    @Throws(Exception::class)
    public fun run(context: NodeContext)
}

/**
 * The body of a non-blocking node of a [JavaGraph]: starts work and returns a [CompletionStage] that
 * completes when it is done. It is called on the run's threads, so it must not block.
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
    public fun run(context: NodeContext): CompletionStage<*>
}
