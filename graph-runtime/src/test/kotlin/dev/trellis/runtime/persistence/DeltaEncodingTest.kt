package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import org.junit.jupiter.api.Test

/**
 * Delta checkpoints are written as JSON text by hand (`PositionEncoder.payload`); whatever the names and values hold,
 * they must read back exactly, through the same decoder as full checkpoints.
 */
class DeltaEncodingTest {
    /** Quotes, backslashes, line breaks, control characters, non-ASCII and a surrogate pair. */
    private val awkward = "say \"hi\" \\ back\\slash\nnew line\r\ttab \u0001\u001f é 漢字 \uD83D\uDE00 </script>"

    object Weird : StateSchema("weird \"schema\" \\ name") {
        val text = key("text \"quoted\"\nkey", default = "")
        val log = key("log\\ key", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val ids = listOf("a \"1\"", "b\\2", "c\n3\u0007", "d é \uD83D\uDE00")

    private val g = graph("graph \"weird\"\n", Weird) {
        val refs = ids.mapIndexed { i, id ->
            node(id) {
                set(Weird.log, listOf("$id:$awkward"))
                if (i == 1) set(Weird.text, awkward + i)
                if (i == 2) set(Weird.text, interrupt("$awkward?"))
            }
        }
        start(refs[0])
        for (i in 1 until refs.size) refs[i - 1] then refs[i]
    }

    @Test
    fun `awkward ids, names, values and interrupt payloads survive delta checkpoints`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val options =
            RunOptions(runId = "weird \"run\"\n", checkpointing = Checkpointing(store, fullSnapshotEvery = 1_000))
        val paused = g.invoke(options = options)
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().payload shouldBe "$awkward?"

        val history = store.history("weird \"run\"\n")
        val deltas = history.filter { it.kind == CheckpointRecord.Kind.DELTA }
        (deltas.size >= 3) shouldBe true
        for (record in history) {
            // Valid JSON for any parser, not only for our own decoder.
            Json.parseToJsonElement(record.payload)
            val (_, data) = PositionCodec.unwrap(g, record.payload, "checkpoint ${record.sequence}")
            data.graphId shouldBe g.id
            data.runId shouldBe "weird \"run\"\n"
            data.stateSchema shouldBe Weird.name
        }
        // The delta after the interrupting node holds its interrupt with the payload as written.
        val interruptDelta = deltas.last { PositionCodec.unwrap(g, it.payload, "delta").second.interrupts.isNotEmpty() }
        val interrupt = PositionCodec.unwrap(g, interruptDelta.payload, "delta").second.interrupts.single()
        interrupt.node shouldBe ids[2]
        interrupt.payload shouldBe "$awkward?"

        // Every checkpoint's state, folded from the full snapshot and the deltas after it, is what the run had then.
        val expectedLogs = ids.take(2).map { "$it:$awkward" }
        g.stateAt(store, "weird \"run\"\n", 1)[Weird.log] shouldBe emptyList()
        g.stateAt(store, "weird \"run\"\n", 2)[Weird.log] shouldBe expectedLogs.take(1)
        g.stateAt(store, "weird \"run\"\n", 3)[Weird.log] shouldBe expectedLogs
        g.stateAt(store, "weird \"run\"\n", 3)[Weird.text] shouldBe awkward + 1

        val done = g.resume("weird \"run\"\n", RunOptions(checkpointing = Checkpointing(store)), awkward)
        done.status shouldBe Status.COMPLETED
        done.state[Weird.text] shouldBe awkward
        done.state[Weird.log] shouldBe ids.map { "$it:$awkward" }
        ids.forEach { done.node(it).executions shouldBe 1 }
    }
}
