package dev.trellis.temporal

import dev.trellis.runtime.Status
import io.kotest.matchers.shouldBe
import io.temporal.testing.TestWorkflowEnvironment
import org.junit.jupiter.api.Test
import java.time.Duration
import java.util.concurrent.TimeUnit

/**
 * A worker killed mid-run (its factory shut down while a node runs) and a new worker started: the run finishes on the
 * new worker, which replays the workflow's history, and no node whose activity completed runs again.
 */
class WorkerRestartTest {
    // A lost attempt is started again after the activity timeout, if its worker could not report it.
    private val scenario =
        RestartScenario("restart", listOf("a", "b"), TemporalOptions(activityTimeout = Duration.ofSeconds(20)))

    @Test
    fun `a run survives its worker's shutdown without running completed nodes again`() {
        TestWorkflowEnvironment.newInstance().use { env ->
            env.start()
            val first = scenario.worker(env)
            val run = TemporalRunner(
                env.workflowClient,
                TemporalHarness.QUEUE,
            ).start(scenario.graph, runId = "restart-1")
            scenario.slowStarted.await(60, TimeUnit.SECONDS) shouldBe true

            first.shutdownNow()
            first.awaitTermination(60, TimeUnit.SECONDS)
            val second = scenario.worker(env)
            try {
                val result = run.resultAsync().get(180, TimeUnit.SECONDS)

                result.status shouldBe Status.COMPLETED
                result.state[RestartScenario.S.log] shouldBe listOf("a", "b", "slow", "c")
                scenario.completed shouldBe mapOf("a" to 1, "b" to 1, "slow" to 1, "c" to 1)
                // Only the attempt the shutdown interrupted ran again.
                scenario.executions shouldBe mapOf("a" to 1, "b" to 1, "slow" to 2, "c" to 1)
                result.nodes.mapValues { it.value.executions to it.value.attempts } shouldBe
                    mapOf("a" to (1 to 1), "b" to (1 to 1), "slow" to (1 to 1), "c" to (1 to 1))
            } finally {
                second.shutdownNow()
            }
        }
    }
}
