package dev.trellis.temporal

import dev.trellis.graph.Graph
import java.util.TreeMap

/**
 * The versions of the graphs a worker runs (`docs/temporal.md`, "Versioning"): each graph id with one or more
 * numbered versions, from 1. A new run takes the latest version of its graph, and the workflow records it in its
 * history (`Workflow.getVersion`, a marker); a worker that replays the run — after a restart, on another host —
 * runs the version the history names, so a changed graph never breaks a run in flight. Keep every version that
 * runs in flight may still use registered; a worker without the version a history names fails that workflow task,
 * and the run waits for a worker that has it.
 *
 * ```kotlin
 * TemporalWorkers.register(worker, GraphVersions().add(1, researchV1).add(2, researchV2))
 * ```
 */
public class GraphVersions {
    private val byId = LinkedHashMap<String, TreeMap<Int, Graph>>()

    /**
     * Adds [graph] as [version] of its graph id.
     *
     * @throws IllegalArgumentException when [version] is below 1 or already added for that id.
     */
    public fun add(version: Int, graph: Graph): GraphVersions {
        require(version >= 1) { "Graph '${graph.id}': versions are numbered from 1, but was $version." }
        val versions = byId.getOrPut(graph.id) { TreeMap() }
        require(versions.put(version, graph) == null) {
            "Graph '${graph.id}' has version $version twice; give each version its own number."
        }
        return this
    }

    /** The versions added, by graph id, then by version number. */
    internal fun all(): Map<String, TreeMap<Int, Graph>> = byId
}
