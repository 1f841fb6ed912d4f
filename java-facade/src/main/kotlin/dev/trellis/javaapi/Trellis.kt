package dev.trellis.javaapi

import dev.trellis.graph.Graph

/**
 * The entry point of Trellis for Java callers: runners for graphs written in Kotlin or with [JavaGraph].
 *
 * ```java
 * TrellisRunner runner = Trellis.runner(graph);
 * RunResult result = runner.invoke(Map.of("question", "Why is the sky blue?"));
 * ```
 */
public object Trellis {
    /** A runner of [graph] with the default [JavaRunOptions]. */
    @JvmStatic
    public fun runner(graph: Graph): TrellisRunner = TrellisRunner(graph, JavaRunOptions.DEFAULT)

    /** A runner of [graph] with [options] (executor, run id, clock, random source). */
    @JvmStatic
    public fun runner(graph: Graph, options: JavaRunOptions): TrellisRunner = TrellisRunner(graph, options)
}
