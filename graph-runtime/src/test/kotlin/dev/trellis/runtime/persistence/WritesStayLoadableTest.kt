package dev.trellis.runtime.persistence

import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.stateAt
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

/**
 * Node writes are checked at the write (type and nullability, naming key and node), so no checkpoint holds a value
 * it cannot load; and a value its serializer cannot write leaves a FAILED checkpoint (the error, without the value),
 * so the store never shows a failed run as RUNNING and resumable. Real SQLite and PostgreSQL.
 */
class WritesStayLoadableTest {
    /** Writes non-negative amounts only: a serializer that fails on some values of its type. */
    object Amounts : KSerializer<Int> {
        override val descriptor = PrimitiveSerialDescriptor("test.Amount", PrimitiveKind.INT)

        override fun serialize(encoder: Encoder, value: Int) {
            if (value < 0) throw SerializationException("a negative amount cannot be written")
            encoder.encodeInt(value)
        }

        override fun deserialize(decoder: Decoder): Int = decoder.decodeInt()
    }

    object Ledger : StateSchema("ledger") {
        val note = key("note", default = "")
        val count = key("count", default = 0)
        val amount = key("amount", Amounts, Int::class.javaObjectType, nullable = false, default = 0)
    }

    @Suppress("UNCHECKED_CAST")
    private fun <T> raw(key: StateKey<T>): StateKey<Any?> = key as StateKey<Any?>

    private fun options(db: SqlDatabase, runId: String) =
        RunOptions(runId = runId, checkpointing = Checkpointing(db.store(), mode = Checkpointing.Mode.EVERY_STEP))

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a wrong-typed write fails its node, naming key and node, and every checkpoint loads`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val runId = "wrong-type-${backend.name.lowercase()}"
                val g = graph("ledger-wrong", Ledger) {
                    val first = node("first") { set(Ledger.note, "one") }
                    val second = node("second") { set(raw(Ledger.note), 42) }
                    start(first)
                    first then second
                }
                val options = options(db, runId)
                val e = shouldThrow<GraphRunException> { g.invoke(options = options) }
                val message = e.cause!!.message!!
                message shouldContain "Node 'second'"
                message shouldContain "state key 'note'"
                message shouldContain "java.lang.Integer"
                e.result.state[Ledger.note] shouldBe "one"
                val store = options.checkpointing!!.store
                store.latest(runId)!!.status shouldBe "FAILED"
                for (checkpoint in g.checkpoints(store, runId)) g.stateAt(store, runId, checkpoint.sequence)
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a null written to a non-null key fails its node`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val g = graph("ledger-null", Ledger) { start(node("blank") { set(raw(Ledger.count), null) }) }
                val e = shouldThrow<GraphRunException> {
                    g.invoke(options = options(db, "null-${backend.name.lowercase()}"))
                }
                e.cause!!.message!! shouldContain "Node 'blank' wrote null to state key 'count'"
                e.result.state[Ledger.count] shouldBe 0
                // Without checkpointing too: the check is at the write, not in the checkpoint.
                shouldThrow<GraphRunException> { g.invoke() }.result.state[Ledger.count] shouldBe 0
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a value that cannot be written leaves a FAILED checkpoint without it`(backend: Backend) {
        SqlDatabase(backend).use { db ->
            runBlocking {
                val runId = "unwritable-${backend.name.lowercase()}"
                val g = graph("ledger-unwritable", Ledger) {
                    val deposit = node("deposit") { set(Ledger.amount, 5) } // the first value reads back
                    val overdraw = node("overdraw") {
                        set(Ledger.amount, -3)
                        set(Ledger.note, "overdrawn")
                    }
                    start(deposit)
                    deposit then overdraw
                }
                val options = options(db, runId)
                val e = shouldThrow<GraphRunException> { g.invoke(options = options) }
                e.result.status shouldBe Status.FAILED
                e.cause!!.message!! shouldContain "negative amount"
                val store = options.checkpointing!!.store
                val latest = store.latest(runId)!!
                latest.status shouldBe "FAILED"
                latest.payload shouldContain "negative amount" // the error is recorded
                val state = g.stateAt(store, runId)
                state[Ledger.note] shouldBe "overdrawn"
                // The value that cannot be written is left out: the key reads its default.
                state[Ledger.amount] shouldBe 0
            }
        }
    }
}
