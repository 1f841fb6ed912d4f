package dev.trellis.runtime.persistence

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.testing.ChildJvm
import dev.trellis.testing.TestClock
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import java.time.Instant
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.ContinuationInterceptor
import kotlin.random.Random

/**
 * Leases stay live under attack: renewal does not depend on the run's threads, a frozen worker inside a PostgreSQL
 * transaction does not block a takeover beyond the lock timeout, a cancelled caller's claim does not keep the run,
 * and the lease clock's bound holds. Real SQLite, real PostgreSQL, a real child JVM stopped with SIGSTOP.
 */
class LeasesStayLiveTest {
    @TempDir
    lateinit var dir: Path

    object Work : StateSchema("lease-work") {
        val done = key("done", default = 0)
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    fun `nodes blocking the run's only thread do not starve lease renewal (SQLite, runBlocking)`() {
        val db = dir.resolve("runs.db")
        // Long enough that a renewal delayed by a loaded machine (2 cores shared with other builds) still lands in
        // time; the old code lost the run after one lease duration whatever its length.
        val lease = Duration.ofSeconds(4)
        val owner = SqliteCheckpointStore(db, leaseDuration = lease)
        val taker = SqliteCheckpointStore(db, leaseDuration = lease)
        val blocking = graph("blocking", Work) {
            val first = node("first") {
                Thread.sleep(12_000) // blocks the thread: three lease durations
                set(Work.done, 1)
            }
            val second = node("second") {
                Thread.sleep(4_000)
                set(Work.done, 2)
            }
            start(first)
            first then second
        }
        val stop = AtomicBoolean(false)
        val takeovers = AtomicInteger()
        val refusals = AtomicInteger()
        // Another worker tries to take the run over all along, on its own thread.
        val attacker = Thread {
            runBlocking {
                // Attacks from the moment worker-a holds the run.
                while (!stop.get() && taker.runs().none { it.runId == "starved" && it.owner == "worker-a" }) delay(20)
                while (!stop.get()) {
                    try {
                        taker.claim("starved", "worker-b")
                        // A claim once the run ended and released its lease is no takeover: its last checkpoint says
                        // COMPLETED (saved before the release). Taken over while running, it would say RUNNING.
                        if (taker.latest("starved")?.status != "COMPLETED") takeovers.incrementAndGet()
                    } catch (_: RunOwnedException) {
                        refusals.incrementAndGet()
                    }
                    delay(100)
                }
            }
        }
        try {
            val result = runBlocking {
                // The run's nodes run on this runBlocking's only thread, as a blocking caller's would.
                val here = coroutineContext[ContinuationInterceptor] as CoroutineDispatcher
                attacker.start()
                blocking.invoke(
                    options = RunOptions(
                        runId = "starved",
                        dispatcher = here,
                        checkpointing = Checkpointing(owner, owner = "worker-a"),
                    ),
                )
            }
            withClue("refused ${refusals.get()} times") { takeovers.get() shouldBe 0 }
            result.status shouldBe Status.COMPLETED
            result.state[Work.done] shouldBe 2
        } finally {
            stop.set(true)
            attacker.join()
            owner.close()
            taker.close()
        }
    }

    /**
     * A renewal that fails for a reason that may pass (here the store says the database is busy, once) is tried again
     * while the lease lasts: the run keeps its lease against a process trying to take it over all along, and ends
     * COMPLETED. Before, one failed renewal ended the renewals: the lease lapsed, the other process took the run, and
     * the run's next checkpoint was fenced out.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    fun `a renewal that fails once is tried again, and the run keeps its lease`(): Unit = runBlocking {
        val store = dev.trellis.checkpoint.InMemoryCheckpointStore(leaseDuration = Duration.ofSeconds(2))
        val renewals = AtomicInteger()
        val flaky = object : dev.trellis.checkpoint.CheckpointStore by store {
            override suspend fun renew(lease: Lease): Lease {
                if (renewals.incrementAndGet() == 1) throw CheckpointStoreException("The database is busy (test).")
                return store.renew(lease)
            }
        }
        val slow = graph("slow-renewal", Work) {
            start(
                node("wait") {
                    delay(4_500) // more than two lease durations, in real time
                    set(Work.done, 1)
                },
            )
        }
        val takeovers = AtomicInteger()
        val attacker = launch(kotlinx.coroutines.Dispatchers.Default) {
            while (store.runs().none { it.runId == "flaky-renewal" && it.owner == "worker-a" }) delay(10)
            while (true) {
                try {
                    store.claim("flaky-renewal", "worker-b")
                    if (store.latest("flaky-renewal")?.status != "COMPLETED") takeovers.incrementAndGet()
                    break
                } catch (_: RunOwnedException) {
                    delay(100)
                }
            }
        }
        val result = slow.invoke(
            options = RunOptions(
                runId = "flaky-renewal",
                dispatcher = kotlinx.coroutines.Dispatchers.Default,
                checkpointing = Checkpointing(flaky, owner = "worker-a"),
            ),
        )
        attacker.cancelAndJoin()
        withClue("renewals: ${renewals.get()}") {
            takeovers.get() shouldBe 0
            result.status shouldBe Status.COMPLETED
            renewals.get() shouldBeGreaterThanOrEqual 3
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    fun `a worker frozen inside a PostgreSQL transaction does not block a takeover beyond the lock timeout`() {
        val schema = TestPostgres.newSchema()
        val url = System.getenv(TestPostgres.URL_VARIABLE) ?: "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        val marker = dir.resolve("marker")
        val out = dir.resolve("child.out").toFile()
        val child = ChildJvm.start(FrozenWorkerChild::class.java, listOf(url, schema, "frozen", marker.toString()), out)
        try {
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
            while (!Files.exists(marker)) {
                check(child.isAlive) { "The child ended before freezing: ${ChildJvm.output(out)}" }
                check(System.nanoTime() < deadline) { "The child did not freeze in 60 s: ${ChildJvm.output(out)}" }
                Thread.sleep(10) // polling a file of another process
            }
            signal("STOP", child.pid())
            val taker = PostgresCheckpointStore(
                TestPostgres.dataSource,
                schema,
                leaseDuration = Duration.ofSeconds(30),
                lockTimeout = Duration.ofSeconds(2),
            )
            val lease = runBlocking {
                withTimeout(60_000) {
                    var taken: Lease? = null
                    while (taken == null) {
                        try {
                            taken = taker.claim("frozen", "taker")
                        } catch (e: RunOwnedException) {
                            delay(200) // the frozen worker's 1 s lease is still live
                        } catch (e: CheckpointStoreException) {
                            // The row is locked by the frozen transaction: the wait ended at the lock timeout.
                            e.message!! shouldContain "lock timeout"
                        }
                    }
                    taken
                }
            }
            lease.owner shouldBe "taker"
            signal("CONT", child.pid())
            withClue(ChildJvm.output(out)) { child.waitFor(60, TimeUnit.SECONDS) shouldBe true }
            // The frozen worker's transaction was ended by the server: its renewal did not go through.
            ChildJvm.output(out) shouldContain "renewal: failed"
            runBlocking { taker.runs().single().owner shouldBe "taker" }
        } finally {
            child.destroyForcibly()
            child.waitFor(15, TimeUnit.SECONDS)
            TestPostgres.dropSchema(schema)
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    fun `a claim waiting on a locked row returns when its caller's withTimeout expires`() {
        val schema = TestPostgres.newSchema()
        try {
            val store = PostgresCheckpointStore(TestPostgres.dataSource, schema, lockTimeout = Duration.ofMinutes(5))
            runBlocking { store.release(store.claim("locked", "first")) }
            TestPostgres.dataSource.connection.use { holder ->
                holder.autoCommit = false
                holder.createStatement().use {
                    it.executeQuery("SELECT * FROM $schema.trellis_runs WHERE run_id = 'locked' FOR UPDATE").close()
                }
                val got = runBlocking { withTimeoutOrNull(1_000) { store.claim("locked", "second") } }
                got shouldBe null
                holder.rollback()
            }
            // The cancelled claim changed nothing: the next one goes through.
            runBlocking { store.claim("locked", "second").epoch shouldBe 2 }
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    fun `a storm of cancellations on PostgreSQL leaves no run leased`() {
        val schema = TestPostgres.newSchema()
        val url = System.getenv(TestPostgres.URL_VARIABLE) ?: "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        val pool = HikariDataSource(
            HikariConfig().apply {
                jdbcUrl = url
                maximumPoolSize = 16
                connectionTimeout = 60_000
            },
        )
        try {
            val store = PostgresCheckpointStore(pool, schema)
            val twoSteps = graph("storm", Work) {
                val a = node("a") {
                    delay(Random.nextLong(0, 5))
                    set(Work.done, 1)
                }
                val b = node("b") { set(Work.done, 2) }
                start(a)
                a then b
            }
            runBlocking {
                val random = Random(17)
                repeat(10) { round ->
                    coroutineScope {
                        // 100 runs cancelled at random points, 10 left to complete (they show claims work).
                        val runs = (0 until 110).map { i ->
                            val run = launch {
                                twoSteps.invoke(
                                    options = RunOptions(
                                        runId = "storm-$round-$i",
                                        checkpointing = Checkpointing(store, owner = "storm-worker"),
                                    ),
                                )
                            }
                            run to random.nextLong(0, if (i % 2 == 0) 15 else 100)
                        }
                        for ((run, after) in runs.take(100)) {
                            launch {
                                delay(after)
                                run.cancelAndJoin()
                            }
                        }
                    }
                    yield()
                }
                val leased = store.runs().filter { it.owner != null }
                withClue("runs still leased: ${leased.take(5)}") { leased.size shouldBe 0 }
                withClue("the runs left alone completed (and cancelled ones that finished first)") {
                    store.runs().count { it.latestStatus == "COMPLETED" } shouldBeGreaterThanOrEqual 100
                }
            }
        } finally {
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    fun `a cancelled PostgreSQL call never cancels the statement of the next borrower of its pooled connection`() {
        val schema = TestPostgres.newSchema()
        val url = System.getenv(TestPostgres.URL_VARIABLE) ?: "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        // One connection: whatever a late cancel reaches, it reaches the bystander that borrowed it next.
        val pool = HikariDataSource(
            HikariConfig().apply {
                jdbcUrl = url
                maximumPoolSize = 1
                connectionTimeout = 60_000
            },
        )
        try {
            val store = PostgresCheckpointStore(pool, schema)
            val random = Random(23)
            runBlocking(kotlinx.coroutines.Dispatchers.IO) {
                store.runs()
                val failures = mutableListOf<Throwable>()
                repeat(ROUNDS) { i ->
                    coroutineScope {
                        val victim = launch { store.claim("victim-$i", "cancelled-worker") }
                        val bystander = launch {
                            runCatching { store.claim("bystander-$i", "worker") }.exceptionOrNull()
                                ?.let { synchronized(failures) { failures += it } }
                        }
                        // Cancelled at any point of its transaction, to the microsecond.
                        val at = System.nanoTime() + random.nextLong(0, 3_000_000)
                        while (System.nanoTime() < at) yield()
                        victim.cancelAndJoin()
                        bystander.join()
                    }
                }
                withClue("bystanders whose statement was cancelled: ${failures.take(3)}") {
                    failures.size shouldBe 0
                }
                withClue("the bystanders hold their runs") {
                    store.runs().count { it.runId.startsWith("bystander-") && it.owner == "worker" } shouldBe ROUNDS
                }
            }
        } finally {
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    @Test
    fun `a worker whose clock is less than half a lease ahead cannot take a live run on SQLite, beyond it the owner is fenced`() {
        val db = dir.resolve("skew.db")
        val start = Instant.parse("2026-01-01T00:00:00Z")
        val lease = Duration.ofSeconds(30)
        val owner = SqliteCheckpointStore(db, TestClock(start), lease)
        val slightlyAhead = SqliteCheckpointStore(db, TestClock(start.plusSeconds(14)), lease)
        val farAhead = SqliteCheckpointStore(db, TestClock(start.plusSeconds(40)), lease)
        try {
            runBlocking {
                val held = owner.claim("skewed", "worker-a")
                val refused = runCatching { slightlyAhead.claim("skewed", "worker-b") }.exceptionOrNull()
                (refused is RunOwnedException) shouldBe true
                // Past the bound the run is taken over, and fencing keeps the owner from writing over it.
                farAhead.claim("skewed", "worker-c").epoch shouldBe 2
                val record =
                    CheckpointRecord("skewed", 1, null, "g", 1, start, "RUNNING", CheckpointRecord.Kind.FULL, "{}")
                runCatching { owner.append(held, record) }.exceptionOrNull()!!.javaClass shouldBe
                    FencedOutException::class.java
            }
        } finally {
            listOf(owner, slightlyAhead, farAhead).forEach { it.close() }
        }
    }

    @Test
    fun `PostgreSQL leases run by the database's clock`() {
        val schema = TestPostgres.newSchema()
        try {
            val store = PostgresCheckpointStore(TestPostgres.dataSource, schema, leaseDuration = Duration.ofSeconds(30))

            fun dbNow(): Instant = TestPostgres.dataSource.connection.use { c ->
                c.createStatement().use { s ->
                    s.executeQuery("SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT").use {
                        it.next()
                        Instant.ofEpochMilli(it.getLong(1))
                    }
                }
            }
            val before = dbNow()
            val lease = runBlocking { store.claim("db-clock", "worker-a") }
            val after = dbNow()
            (lease.expiresAt >= before.plusSeconds(30) && lease.expiresAt <= after.plusSeconds(30)) shouldBe true
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    private fun signal(name: String, pid: Long) {
        val kill = ProcessBuilder("kill", "-$name", pid.toString()).redirectErrorStream(true).start()
        kill.waitFor(10, TimeUnit.SECONDS) shouldBe true
        withClue(kill.inputStream.bufferedReader().readText()) { kill.exitValue() shouldBe 0 }
    }

    private companion object {
        const val ROUNDS = 1000
    }
}
