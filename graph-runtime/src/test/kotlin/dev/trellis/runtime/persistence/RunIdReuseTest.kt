package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.JavaCaller
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Test

/** A new run cannot take the id of a run in the store; the message says what to do, in the caller's language. */
@OptIn(InternalTrellisApi::class)
class RunIdReuseTest {
    object Ask : StateSchema("ask") {
        val answer = key("answer", default = "")
    }

    private val ask = graph("ask", Ask) {
        val question = node("question") { set(Ask.answer, interrupt("ok?")) }
        start(question)
    }

    private val store = InMemoryCheckpointStore()

    private fun options(runId: String? = null) = RunOptions(runId = runId, checkpointing = Checkpointing(store))

    @Test
    fun `the id of a paused run says to resume it`(): Unit = runBlocking {
        ask.invoke(options = options("paused")).status shouldBe Status.INTERRUPTED
        val message = shouldThrow<IllegalStateException> { ask.invoke(options = options("paused")) }.message!!
        message shouldContain "already has checkpoints in the store; resume it with graph.resume(\"paused\", options)"
        message shouldContain "latest checkpoint is INTERRUPTED"
    }

    @Test
    fun `the id of an ended run says to use another id, fork it or delete it, never to resume it`(): Unit = runBlocking {
        ask.invoke(options = options("ended"))
        ask.resume("ended", options(), "yes").status shouldBe Status.COMPLETED
        val message = shouldThrow<IllegalStateException> { ask.invoke(options = options("ended")) }.message!!
        message shouldContain "already ended COMPLETED"
        message shouldContain "graph.fork(\"ended\", sequence, options)"
        message shouldContain "store.delete(\"ended\")"
        message shouldContain "RunOptions.runId"
        message shouldNotContain "resume it"

        store.delete("ended")
        ask.invoke(options = options("ended")).status shouldBe Status.INTERRUPTED
    }

    @Test
    fun `from the Java facade the message names the Java calls`(): Unit = runBlocking {
        ask.invoke(options = options("java"))
        val message = withContext(JavaCaller) {
            shouldThrow<IllegalStateException> { ask.invoke(options = options("java")) }.message!!
        }
        message shouldContain "runner.resumeAsync(\"java\")"
        message shouldContain "JavaRunOptions.builder().runId(...)"
        message shouldNotContain "graph."
    }
}
