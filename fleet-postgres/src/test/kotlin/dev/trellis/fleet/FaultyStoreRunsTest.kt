package dev.trellis.fleet

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.State
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.ResumableRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.testing.FaultProxy
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.time.Duration
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * 200 checkpointed runs of a graph with a fan-out, a join and a loop, through a [PostgresCheckpointStore] whose
 * connections go through a [FaultProxy] that cuts, resets and stalls them at random: every run completes with the
 * state of an uninterrupted run, no completed node runs twice, no run ends FAILED, no lease is left held.
 *
 * The store retries every fault; a run meets [CheckpointStoreUnavailableException] only if the proxy kept the
 * database away past the store's bound, and then it is resumed (the runtime stops such a run resumable).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class FaultyStoreRunsTest {
    object Steps : StateSchema("faulty-steps") {
        val id = key("id", default = "")
        val fanned = key("fanned", default = 0, reducer = Reducer.sum())
        val joined = key("joined", default = 0)
        val loops = key("loops", default = 0, reducer = Reducer.sum())
    }

    private val executions = ConcurrentHashMap<String, AtomicInteger>()

    private fun ran(state: State, node: String) {
        executions.computeIfAbsent("${state[Steps.id]}/$node") { AtomicInteger() }.incrementAndGet()
    }

    /** s → (a, b) → j → l, l looping three times. */
    private val graph: Graph = graph("faulty-steps", Steps) {
        val s = node("s") { ran(state, "s") }
        val a = node("a") {
            ran(state, "a")
            set(Steps.fanned, 1)
        }
        val b = node("b") {
            ran(state, "b")
            set(Steps.fanned, 10)
        }
        val j = node("j") {
            ran(state, "j")
            set(Steps.joined, get(Steps.fanned))
        }
        val l = node("l") {
            ran(state, "l")
            set(Steps.loops, 1)
        }
        start(s)
        s then a
        s then b
        a then j
        b then j
        j then l
        l.route(l, END) { if (it[Steps.loops] < 3) l else END }
    }

    private val schema = TestPostgres.newSchema()
    private val proxy = FaultProxy(seed = 2028, target = TestPostgres.address)
    private val pool = HikariDataSource(
        HikariConfig().apply {
            dataSource = TestPostgres.through(proxy, "trellis-faulty-runs-" + UUID.randomUUID().toString().take(8))
            maximumPoolSize = 12
            minimumIdle = 2
            connectionTimeout = Duration.ofSeconds(30).toMillis()
        },
    )
    private val store = PostgresCheckpointStore(pool, schema, unavailableAfter = Duration.ofSeconds(60))

    @AfterEach
    fun cleanUp() {
        proxy.close()
        pool.close()
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `200 runs complete as if uninterrupted while the proxy cuts, resets and stalls connections`(): Unit =
        runBlocking {
            store.runs() // the tables, before the faults
            proxy.startChaos(meanPause = Duration.ofMillis(60), maxStall = Duration.ofMillis(800))
            val resumed = AtomicInteger()
            val parallel = Semaphore(16)
            // At least RUNS runs, in waves, and more waves until the proxy has made MIN_FAULTS faults: how many faults
            // fall into a wave depends on how fast the machine runs it, the test's strength must not.
            val results = ArrayList<RunResult>()
            while (results.size < RUNS || (proxy.faults().values.sum() < MIN_FAULTS && results.size < MAX_RUNS)) {
                val first = results.size + 1
                results += (first until first + WAVE).map { i ->
                    async(Dispatchers.IO) {
                        parallel.withPermit { runToEnd("run-$i", resumed) }
                    }
                }.awaitAll()
            }
            proxy.stopChaos()

            val faults = proxy.faults()
            withClue("faults $faults after ${results.size} runs") {
                faults.values.sum() shouldBeGreaterThanOrEqual MIN_FAULTS
            }
            for ((i, result) in results.withIndex()) {
                val runId = "run-${i + 1}"
                withClue(runId) {
                    result.status shouldBe Status.COMPLETED
                    result.state[Steps.fanned] shouldBe 11
                    result.state[Steps.joined] shouldBe 11
                    result.state[Steps.loops] shouldBe 3
                    for (node in listOf("s", "a", "b", "j")) executions["$runId/$node"]?.get() shouldBe 1
                    executions["$runId/l"]?.get() shouldBe 3
                    store.latest(runId)!!.status shouldBe "COMPLETED"
                }
            }
            store.runs().filter { it.owner != null }.map { it.runId }.shouldBeEmpty()
            println("FaultyStoreRunsTest: faults $faults, runs resumed after the store stayed away: ${resumed.get()}")
        }

    /**
     * Runs [runId] to its end; a run stopped because the store stayed unavailable past its bound is resumed (what an
     * application does with [CheckpointStoreUnavailableException]).
     */
    private suspend fun runToEnd(runId: String, resumed: AtomicInteger): RunResult {
        val options = RunOptions(runId = runId, checkpointing = Checkpointing(store, owner = "faulty-$runId"))
        var result = attempt { graph.invoke(stateOf(Steps.id to runId), options) }
        while (result == null) {
            resumed.incrementAndGet()
            result = attempt { graph.resume(runId, options) }
        }
        return result
    }

    /** [run]'s result, or null when the store stayed unavailable (thrown, or recorded as the run's error). */
    private suspend fun attempt(run: suspend () -> RunResult): RunResult? = try {
        run().takeUnless { r -> r.errors.any { it is CheckpointStoreUnavailableException } }
    } catch (e: CheckpointStoreUnavailableException) {
        null
    } catch (e: ResumableRunException) {
        null
    } catch (e: GraphRunException) {
        if (e.result.errors.any { it is CheckpointStoreUnavailableException }) null else e.result
    }

    private companion object {
        const val RUNS = 200
        const val WAVE = 50
        const val MIN_FAULTS = 50
        const val MAX_RUNS = 2_000
    }
}
