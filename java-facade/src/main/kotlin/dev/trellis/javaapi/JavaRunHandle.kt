package dev.trellis.javaapi

import dev.trellis.runtime.RunHandle
import dev.trellis.runtime.RunResult
import kotlinx.coroutines.future.asCompletableFuture
import java.util.concurrent.CompletableFuture

/**
 * A run started with [TrellisRunner.start]: [cancel] it, or wait for its [result]. The Java twin of the runtime's
 * `RunHandle`, whose result is a `Deferred` (`docs/java.md`).
 *
 * ```java
 * JavaRunHandle run = runner.start(input, event -> log.info("{}", event));
 * run.cancel();                                  // running nodes are cancelled (blocking ones interrupted)
 * RunResult result = run.result().join();        // status CANCELLED
 * ```
 */
public class JavaRunHandle internal constructor(private val handle: RunHandle) {
    private val result: CompletableFuture<RunResult> = handle.result.asCompletableFuture().also { future ->
        future.whenComplete { _, _ -> if (future.isCancelled) handle.cancel() }
    }

    /** The run's id. */
    public val runId: String get() = handle.runId

    /** Cancels the run: running nodes are cancelled cooperatively and the run ends `CANCELLED`. */
    public fun cancel() {
        handle.cancel()
    }

    /**
     * The run's result, completed after the last event was delivered, whatever its status (`COMPLETED`,
     * `FAILED` or `CANCELLED`): unlike [TrellisRunner.invokeAsync], a failed run completes it normally.
     * It completes exceptionally only when the event consumer threw (the run is then cancelled). Cancelling
     * this future cancels the run.
     */
    public fun result(): CompletableFuture<RunResult> = result

    /** Whether the run has ended and its result is available. */
    public fun isDone(): Boolean = handle.isDone

    override fun toString(): String = "JavaRunHandle(${handle.runId}, done=${handle.isDone})"
}
