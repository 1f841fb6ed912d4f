package dev.trellis.runtime.reference

import io.kotest.property.Shrinker

/**
 * Shrinks a failing [GraphSpec] towards a smaller one that still fails: fewer edges (keeping every node
 * reachable), no failures, no retries, no concurrency limit, unit durations, plain nodes instead of subgraph and
 * map nodes, simpler maps. kotest applies it repeatedly.
 */
object GraphSpecShrinker : Shrinker<GraphSpec> {
    override fun shrink(value: GraphSpec): List<GraphSpec> {
        val candidates = ArrayList<GraphSpec>()
        for (i in value.edges.indices) candidates += value.copy(edges = value.edges.filterIndexed { j, _ -> j != i })
        if (value.failAt.any { it != 0 }) candidates += value.withoutFailures()
        if (value.flaky.any { it != 0 }) candidates += value.copy(flaky = List(value.size) { 0 })
        if (value.maxConcurrency != Int.MAX_VALUE) candidates += value.copy(maxConcurrency = Int.MAX_VALUE)
        if (value.durations.any { d -> d.any { it != 1 } }) {
            candidates += value.copy(durations = value.durations.map { d -> d.map { (it + 1) / 2 } })
        }
        for ((i, kind) in value.kinds.withIndex()) {
            if (kind == NodeKind.Plain) continue
            candidates += value.copy(kinds = value.kinds.mapIndexed { j, k -> if (j == i) NodeKind.Plain else k })
            if (kind is NodeKind.MapOf && kind.simplified().toString() != kind.toString()) {
                candidates +=
                    value.copy(kinds = value.kinds.mapIndexed { j, k -> if (j == i) kind.simplified() else k })
            }
        }
        return candidates.filter { it.isValid }
    }
}
