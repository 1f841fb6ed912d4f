package dev.trellis.samples.docs.persistence.timetravel

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.fork
import dev.trellis.runtime.invoke
import dev.trellis.runtime.stateAt
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

/** The time travel example of `docs/persistence.md`, as the guide shows it, run and checked. */
class TimeTravelGuideTest {
    @Test
    fun `time travel lists a run's checkpoints, reads the state at one and forks from it`(): Unit = runBlocking {
        val graph = drafts
        val store = InMemoryCheckpointStore()
        graph.invoke(options = RunOptions(runId = "r1", checkpointing = Checkpointing(store)))
        val history = graph.checkpoints(store, "r1") // List<CheckpointInfo>: sequence, status, full, createdAt…
        val then = graph.stateAt(store, "r1", history[2].sequence) // the State at that point (latest when null)
        val formal = RunOptions(runId = "r1-formal", checkpointing = Checkpointing(store))
        val fork = graph.fork("r1", history[2].sequence, formal) {
            it.with(Doc.tone, "formal") // edit the state before continuing
        }
        then[Doc.steps] shouldContainExactly listOf("outline", "draft")
        fork.state[Doc.steps] shouldContainExactly listOf("outline", "draft", "polish formal")
        graph.checkpoints(store, "r1-formal").first().forkedFrom?.runId shouldBe "r1"
    }
}
