package dev.trellis.javaapi.internal

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeScope
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.MapOptions
import dev.trellis.javaapi.NodeOptions
import kotlin.time.toKotlinDuration

/*
 * How `JavaGraph.Builder` declares nodes and maps with their Java options on the Kotlin builder.
 */

/** Declares node [id] with [body] and the timeout, retry, description, slice and cache of [options]. */
internal fun GraphBuilder.declareNode(id: String, options: NodeOptions, body: NodeBody) {
    node(
        id,
        options.timeoutOrNull?.toKotlinDuration(),
        options.retryOrNull,
        options.descriptionOrNull,
        options.readsOrNull,
        options.writesOrNull,
        options.cacheOrNull,
        body,
    )
}

/** Declares map node [id] running [task] per item of [over], with [options]. */
internal fun <T> GraphBuilder.declareMap(
    id: String,
    over: StateKey<out List<T>>,
    options: MapOptions,
    task: suspend NodeScope.(T) -> Unit,
) {
    map(
        id,
        over,
        options.maxConcurrency,
        options.taskFailure,
        options.errorsOrNull,
        options.timeoutOrNull?.toKotlinDuration(),
        options.retryOrNull,
        options.descriptionOrNull,
        null,
        task,
    )
}
