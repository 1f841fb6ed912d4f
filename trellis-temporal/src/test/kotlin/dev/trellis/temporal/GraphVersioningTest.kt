package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Status
import io.kotest.matchers.shouldBe
import io.temporal.common.WorkflowExecutionHistory
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.testing.WorkflowReplayer
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.nio.file.Path

/**
 * A graph version is Temporal's patching (docs/temporal.md, "Versioning"): recorded histories of runs of version 1
 * and version 2 replay on a worker that registers both, each on its own version; a version-1 history does not replay
 * on a worker that dropped version 1. The histories are files beside this test; `-Dtrellis.temporal.record=true`
 * records them again.
 */
class GraphVersioningTest {
    object V : StateSchema("versioned") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val v1: Graph = graph("versioned", V) {
        val a = node("a") { set(V.log, listOf("a")) }
        val b = node("b") { set(V.log, listOf("b")) }
        start(a)
        a then b
    }

    /** Version 2 checks between a and b. */
    private val v2: Graph = graph("versioned", V) {
        val a = node("a") { set(V.log, listOf("a")) }
        val check = node("check") { set(V.log, listOf("checked ${get(V.log).size}")) }
        val b = node("b") { set(V.log, listOf("b")) }
        start(a)
        a then check
        check then b
    }

    private val histories: Path = Path.of("src", "test", "resources", "histories")

    /** The recorded history of a run on a worker with [versions] (recorded first when asked to, or missing). */
    private fun history(name: String, versions: GraphVersions, expectedLog: List<String>): WorkflowExecutionHistory {
        val file = histories.resolve("$name.json")
        if (System.getProperty("trellis.temporal.record") == "true" || !Files.exists(file)) {
            TestWorkflowEnvironment.newInstance().use { env ->
                TemporalWorkers.register(env.newWorker(TemporalHarness.QUEUE), versions)
                env.start()
                val result = TemporalRunner(env.workflowClient, TemporalHarness.QUEUE).start(v1, runId = name)
                    .awaitBlocking()
                result.status shouldBe Status.COMPLETED
                result.state[V.log] shouldBe expectedLog
                Files.createDirectories(histories)
                Files.writeString(file, env.workflowClient.fetchHistory(name).toJson(true))
            }
        }
        return WorkflowExecutionHistory.fromJson(Files.readString(file))
    }

    private fun replay(history: WorkflowExecutionHistory, versions: GraphVersions) {
        TestWorkflowEnvironment.newInstance().use { env ->
            val worker = env.newWorker(TemporalHarness.QUEUE)
            TemporalWorkers.register(worker, versions)
            WorkflowReplayer.replayWorkflowExecution(history, worker)
        }
    }

    @Test
    fun `histories of two graph versions replay on a worker with both`() {
        val first = history("versioned-v1", GraphVersions().add(1, v1), listOf("a", "b"))
        val second = history("versioned-v2", GraphVersions().add(1, v1).add(2, v2), listOf("a", "checked 1", "b"))
        replay(first, GraphVersions().add(1, v1).add(2, v2))
        replay(second, GraphVersions().add(1, v1).add(2, v2))
        replay(second, GraphVersions().add(2, v2))
    }

    @Test
    fun `a history does not replay on a worker without its version`() {
        val first = history("versioned-v1", GraphVersions().add(1, v1), listOf("a", "b"))
        assertThrows<Throwable> { replay(first, GraphVersions().add(2, v2)) }
    }

    @Test
    fun `a history does not replay against a changed graph under the same version`() {
        val first = history("versioned-v1", GraphVersions().add(1, v1), listOf("a", "b"))
        assertThrows<Throwable> { replay(first, GraphVersions().add(1, v2)) }
    }
}
