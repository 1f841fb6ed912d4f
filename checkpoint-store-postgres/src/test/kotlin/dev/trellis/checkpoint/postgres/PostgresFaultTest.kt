package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointConflictException
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.FaultProxy
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.sql.SQLException
import java.time.Duration
import java.util.UUID

/**
 * The PostgreSQL store's retries of faults that pass, through a [FaultProxy]: a backend terminated (57P01) before
 * the commit, and between the commit and its acknowledgement; an acknowledgement lost with the connection; a
 * server that stays away past the bound; and errors that are real answers, which are not retried.
 */
class PostgresFaultTest {
    private companion object {
        /**
         * What marks an append on the wire: the usual append is one statement committed in its own round trip
         * (`docs/persistence-stores.md`, "The fencing rule"), so its commit travels with these bytes, not as a COMMIT.
         */
        const val APPEND = "INSERT INTO"
    }

    private val schema = TestPostgres.newSchema()
    private val proxy = FaultProxy(seed = 28, target = TestPostgres.address)
    private val app = "trellis-fault-" + UUID.randomUUID().toString().take(8)
    private val store = PostgresCheckpointStore(
        TestPostgres.through(proxy, app),
        schema,
        unavailableAfter = Duration.ofSeconds(30),
    )

    @AfterEach
    fun cleanUp() {
        proxy.close()
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `a backend terminated between the commit and its acknowledgement (57P01), the append is found stored`() =
        runBlocking<Unit> {
            val lease = store.claim("run-1", "worker")
            store.append(lease, checkpoint("run-1", 1))
            proxy.trip(APPEND, FaultProxy.TripAction.HoldAnswer { TestPostgres.terminate(app) })
            store.append(lease, checkpoint("run-1", 2))
            proxy.tripsFired shouldBe true
            proxy.faults()["trip"] shouldBe 1
            store.history("run-1").map { it.sequence } shouldContainExactly listOf(1L, 2L)
            store.append(lease, checkpoint("run-1", 3))
            store.latest("run-1") shouldBe checkpoint("run-1", 3)
        }

    @Test
    fun `a backend terminated before the commit (57P01), the append is written again on a fresh connection`() =
        runBlocking<Unit> {
            val lease = store.claim("run-2", "worker")
            store.append(lease, checkpoint("run-2", 1))
            proxy.trip(APPEND, FaultProxy.TripAction.Before { TestPostgres.terminate(app) })
            store.append(lease, checkpoint("run-2", 2))
            proxy.tripsFired shouldBe true
            store.history("run-2").map { it.sequence } shouldContainExactly listOf(1L, 2L)
        }

    @Test
    fun `a commit whose answer is lost with its connection (reset) counts as done, and nothing is written twice`() =
        runBlocking<Unit> {
            val lease = store.claim("run-3", "worker")
            proxy.trip(APPEND, FaultProxy.TripAction.LoseAnswer(reset = true))
            store.append(lease, checkpoint("run-3", 1))
            proxy.trip(APPEND, FaultProxy.TripAction.LoseAnswer(reset = false))
            store.append(lease, checkpoint("run-3", 2))
            proxy.tripsFired shouldBe true
            store.history("run-3") shouldContainExactly listOf(checkpoint("run-3", 1), checkpoint("run-3", 2))
            // A different checkpoint at a stored sequence is still a conflict, not a lost answer.
            shouldThrow<CheckpointConflictException> {
                store.append(lease, checkpoint("run-3", 2, payload = """{"other":true}"""))
            }
        }

    @Test
    fun `an append whose transaction's COMMIT is lost (a parent further back) counts as done`() = runBlocking<Unit> {
        val lease = store.claim("run-7", "worker")
        store.append(lease, checkpoint("run-7", 1))
        store.append(lease, checkpoint("run-7", 2))
        // Its parent is not the latest checkpoint: written in a transaction of its own, with a COMMIT.
        proxy.trip("COMMIT", FaultProxy.TripAction.LoseAnswer())
        store.append(lease, checkpoint("run-7", 3, parentSequence = 1))
        proxy.tripsFired shouldBe true
        store.history("run-7").map { it.sequence } shouldContainExactly listOf(1L, 2L, 3L)
    }

    @Test
    fun `claims, renewals and releases whose answers are lost are retried and leave the run held once`() =
        runBlocking<Unit> {
            proxy.trip("COMMIT", FaultProxy.TripAction.LoseAnswer())
            val lease = store.claim("run-4", "worker")
            proxy.trip("COMMIT", FaultProxy.TripAction.LoseAnswer())
            val renewed = store.renew(lease)
            store.append(renewed, checkpoint("run-4", 1))
            proxy.trip("COMMIT", FaultProxy.TripAction.LoseAnswer())
            store.release(renewed)
            proxy.tripsFired shouldBe true
            store.runs().single().owner shouldBe null
            shouldThrow<FencedOutException> { store.append(renewed, checkpoint("run-4", 2)) }
        }

    @Test
    fun `a server that stays unreachable past the bound ends in CheckpointStoreUnavailableException naming all`() =
        runBlocking<Unit> {
            val lease = store.claim("run-5", "worker")
            proxy.close() // nothing listens on its port any more: every connection attempt is refused
            val quick = PostgresCheckpointStore(
                TestPostgres.through(proxy, app),
                schema,
                unavailableAfter = Duration.ofMillis(300),
            )
            val e = shouldThrow<CheckpointStoreUnavailableException> { quick.append(lease, checkpoint("run-5", 1)) }
            e.runId shouldBe "run-5"
            e.operation shouldContain "append checkpoint 1"
            e.store shouldContain "127.0.0.1"
            e.message!! shouldContain "run 'run-5'"
            e.message!! shouldContain "resume the run"
            e.message!! shouldContain "unavailableAfter"
            e.message!! shouldNotContain "password"
            (e.waited >= Duration.ofMillis(300)) shouldBe true
        }

    @Test
    fun `an error that is a real answer is reported at once, not retried`() = runBlocking<Unit> {
        val lease = store.claim("run-6", "worker")
        store.append(lease, checkpoint("run-6", 1))
        TestPostgres.dataSource.connection.use { c ->
            // A constraint the store does not expect: every append now breaks it.
            c.createStatement().use {
                it.execute("ALTER TABLE $schema.trellis_checkpoints ADD CONSTRAINT no_more CHECK (sequence < 2)")
            }
        }
        val started = System.nanoTime()
        val e = shouldThrow<CheckpointStoreException> { store.append(lease, checkpoint("run-6", 2)) }
        (e is CheckpointStoreUnavailableException) shouldBe false
        (e.cause as SQLException).sqlState shouldBe "23514"
        (System.nanoTime() - started < Duration.ofSeconds(20).toNanos()) shouldBe true
    }
}
