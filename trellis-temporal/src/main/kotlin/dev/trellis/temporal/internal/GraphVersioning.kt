package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import io.temporal.workflow.Workflow
import java.util.TreeMap

/**
 * Graph versions as Temporal's patching (`Workflow.getVersion`): the first workflow task of a run records the latest
 * version this worker has of its graph (a marker in the history); a replay returns the recorded one. A history from
 * before any marker is version 1.
 */
internal object GraphVersioning {
    /** The change id of graph [graphId]'s versions. */
    fun changeId(graphId: String): String = "trellis-graph:$graphId"

    /**
     * The version of graph [graphId] this run runs, among [versions].
     *
     * @throws IllegalStateException (failing the workflow task, so that a worker with that version takes it) when the
     *   history names a version this worker does not have.
     */
    fun version(graphId: String, versions: TreeMap<Int, Graph>): Int {
        val oldest = versions.firstKey()
        val recorded = Workflow.getVersion(
            changeId(graphId),
            if (oldest == 1) Workflow.DEFAULT_VERSION else oldest,
            versions.lastKey(),
        )
        val version = if (recorded == Workflow.DEFAULT_VERSION) 1 else recorded
        check(version in versions) {
            "Run ${Workflow.getInfo().workflowId} runs version $version of graph '$graphId', which this worker does " +
                "not have (it has ${versions.keys}); register that version (GraphVersions) until its runs end."
        }
        return version
    }

    /**
     * The version [version] a run continued as new carries on with (its first segment recorded it), checked against
     * [versions].
     *
     * @throws IllegalStateException (failing the workflow task) when this worker does not have it.
     */
    fun carried(graphId: String, versions: TreeMap<Int, Graph>, version: Int): Int {
        check(version in versions) {
            "Run ${Workflow.getInfo().workflowId} runs version $version of graph '$graphId', which this worker does " +
                "not have (it has ${versions.keys}); register that version (GraphVersions) until its runs end."
        }
        return version
    }
}
