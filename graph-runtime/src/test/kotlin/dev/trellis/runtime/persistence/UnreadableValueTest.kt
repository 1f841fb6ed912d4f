package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.fork
import dev.trellis.runtime.invoke
import dev.trellis.runtime.stateAt
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.builtins.nullable
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import org.junit.jupiter.api.Test

/**
 * A value its key's serializer can write but not read back would make every later checkpoint of the run unreadable
 * (resume, fork, stateAt fail). With checkpointing on, the first value written to each key is read back before it is
 * merged; a value that does not come back fails its node, naming the key, and no checkpoint holds it.
 */
class UnreadableValueTest {
    /** A ticket whose serializer writes its id but reads nothing back: a serializer bug, as Jackson has for a class without a creator. */
    class Ticket(val id: Int)

    object WriteOnly : KSerializer<Ticket> {
        override val descriptor = PrimitiveSerialDescriptor("test.Ticket", PrimitiveKind.INT)

        override fun serialize(encoder: Encoder, value: Ticket) = encoder.encodeInt(value.id)

        override fun deserialize(decoder: Decoder): Ticket = throw SerializationException("no way to build a Ticket")
    }

    /** A serializer that reads back a value of another class than the key holds. */
    @Suppress("UNCHECKED_CAST")
    object ReadsAString : KSerializer<Any> {
        override val descriptor = PrimitiveSerialDescriptor("test.Loose", PrimitiveKind.STRING)

        override fun serialize(encoder: Encoder, value: Any) = encoder.encodeString(value.toString())

        override fun deserialize(decoder: Decoder): Any = decoder.decodeString()
    }

    object Desk : StateSchema("desk") {
        val note = key("note", default = "")
        val ticket = key("ticket", WriteOnly.nullable, Ticket::class.java, nullable = true, default = null)
    }

    object Loose : StateSchema("loose") {
        val count =
            key<Int?>(
                "count",
                (ReadsAString as KSerializer<Int>).nullable,
                Int::class.java,
                nullable = true,
                default = null,
            )
    }

    private val desk = graph("desk", Desk) {
        val open = node("open") { set(Desk.note, "opened") }
        val file = node("file") { set(Desk.ticket, Ticket(7)) }
        start(open)
        open then file
    }

    private fun options(store: InMemoryCheckpointStore, runId: String) = RunOptions(
        runId = runId,
        checkpointing = Checkpointing(store),
    )

    @Test
    fun `a value its serializer cannot read back fails its node, naming the key, and every checkpoint stays loadable`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val e = shouldThrow<GraphRunException> { desk.invoke(options = options(store, "desk-1")) }
        e.result.node("file").status shouldBe Status.FAILED
        e.result.node("open").status shouldBe Status.COMPLETED
        val message = e.cause!!.message!!
        message shouldContain "Node 'file'"
        message shouldContain "state key 'ticket'"
        message shouldContain "no way to build a Ticket"
        e.result.state[Desk.ticket] shouldBe null

        // Every checkpoint of the run loads: time travel works.
        for (checkpoint in desk.checkpoints(
            store,
            "desk-1",
        )) {
            desk.stateAt(store, "desk-1", checkpoint.sequence)[Desk.note]
        }
        desk.stateAt(store, "desk-1")[Desk.note] shouldBe "opened"
        val history = desk.checkpoints(store, "desk-1")
        history.last().status shouldBe "FAILED"
        shouldThrow<GraphRunException> { desk.fork("desk-1", history.first().sequence, options(store, "desk-1-fork")) }
    }

    @Test
    fun `a value read back as another class fails its node too`(): Unit = runBlocking {
        val counter = graph("counter", Loose) { start(node("count") { set(Loose.count, 3) }) }
        val e =
            shouldThrow<GraphRunException> { counter.invoke(options = options(InMemoryCheckpointStore(), "count-1")) }
        e.cause!!.message!! shouldContain "state key 'count'"
        e.cause!!.message!! shouldContain "java.lang.String"
    }

    @Test
    fun `an input value that does not read back is refused before the run starts`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val opener = graph("opener", Desk) { start(node("open") { set(Desk.note, "opened") }) }
        val input = Desk.initialState().with(Desk.ticket, Ticket(1))
        val e = shouldThrow<IllegalArgumentException> { opener.invoke(input, options(store, "input-1")) }
        e.message!! shouldContain "input value of state key 'ticket'"
        e.message!! shouldContain "no way to build a Ticket"
        store.history("input-1") shouldBe emptyList()
        opener.invoke(input).status shouldBe Status.COMPLETED // nothing to read back without checkpointing
    }

    @Test
    fun `without checkpointing nothing is read back`(): Unit = runBlocking {
        desk.invoke().state[Desk.ticket]!!.id shouldBe 7
    }
}
