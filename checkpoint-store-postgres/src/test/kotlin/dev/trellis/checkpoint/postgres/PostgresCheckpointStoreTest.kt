package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreContract
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.TestClock
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.time.Duration

class PostgresCheckpointStoreTest : CheckpointStoreContract() {
    private val schemas = mutableListOf<String>()

    private fun newSchema(): String = TestPostgres.newSchema().also { schemas += it }

    override fun openStore(clock: TestClock): CheckpointStore = PostgresCheckpointStore(
        TestPostgres.dataSource,
        newSchema(),
        clock,
    )

    override fun cleanUp() {
        schemas.forEach(TestPostgres::dropSchema)
    }

    @Test
    fun `two stores on one database race to claim a run, one wins and the other is fenced out later`() = runTest {
        val schema = newSchema()
        // Two stores that start on an empty schema at the same moment: both create the tables concurrently.
        val workerA = PostgresCheckpointStore(TestPostgres.dataSource, schema, clock)
        val workerB = PostgresCheckpointStore(TestPostgres.dataSource, schema, clock)
        repeat(20) { i ->
            val outcomes = listOf(workerA to "worker-a", workerB to "worker-b").map { (store, owner) ->
                async(Dispatchers.IO) { runCatching { store.claim("run-$i", owner) } }
            }.awaitAll()
            outcomes.count { it.isSuccess } shouldBe 1
            val loser = outcomes.single { it.isFailure }.exceptionOrNull()
            (loser is RunOwnedException) shouldBe true
            loser!!.message shouldContain "Run 'run-$i' is owned by"
        }
        workerA.runs().size shouldBe 20

        val winner = workerA.runs().first()
        val (holder, taker) = if (winner.owner == "worker-a") workerA to workerB else workerB to workerA
        val stalled = holder.claim(winner.runId, winner.owner!!)
        holder.append(stalled, checkpoint(winner.runId, 1))
        clock.advance(Duration.ofSeconds(31))
        val takeover = taker.claim(winner.runId, "taker")
        taker.append(takeover, checkpoint(winner.runId, 2))
        shouldThrow<FencedOutException> { holder.append(stalled, checkpoint(winner.runId, 2)) }
            .currentEpoch shouldBe takeover.epoch
        holder.history(winner.runId).map { it.sequence } shouldContainExactly listOf(1L, 2L)
    }

    @Test
    fun `many stores may create the schema at the same time`() = runTest {
        val schema = newSchema()
        val stores = (1..6).map { PostgresCheckpointStore(TestPostgres.dataSource, schema, clock) }
        stores.map { async(Dispatchers.IO) { it.runs() } }.awaitAll()
        TestPostgres.dataSource.connection.use { c ->
            c.createStatement().use { s ->
                s.executeQuery("SELECT version FROM $schema.trellis_schema_version").use {
                    buildList { while (it.next()) add(it.getInt(1)) }
                } shouldContainExactly listOf(1, 2, 3, 4)
            }
        }
    }

    @Test
    fun `a bad schema name is refused`() {
        shouldThrow<IllegalArgumentException> { PostgresCheckpointStore(TestPostgres.dataSource, "Robert'); DROP") }
            .message shouldContain "not a usable schema name"
    }
}
