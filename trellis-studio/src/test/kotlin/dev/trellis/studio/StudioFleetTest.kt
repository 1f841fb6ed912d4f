package dev.trellis.studio

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.fleet.FleetClient
import dev.trellis.fleet.FleetStatus
import dev.trellis.fleet.FleetWorker
import dev.trellis.fleet.FleetWorkerOptions
import dev.trellis.fleet.Submission
import dev.trellis.graph.stateOf
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import org.junit.jupiter.api.Timeout
import org.openqa.selenium.By
import org.opentest4j.TestAbortedException
import java.time.Duration
import java.time.Instant
import java.util.concurrent.TimeUnit

/**
 * The fleet's view in the studio, over the fleet's tables in the local PostgreSQL (a schema of its own): the JSON API
 * as a contract — the overview, a run's queue row, queued runs, a lost claim and its count once taken over, the
 * refusals — and the runs and run pages in a real browser ([Chromium]). The studio only reads: the test writes the
 * queue rows a dead worker would leave.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StudioFleetTest {
    private val schema = TestPostgres.newSchema()
    private val pool = HikariDataSource(
        HikariConfig().apply {
            dataSource = TestPostgres.dataSource
            maximumPoolSize = 8
        },
    )
    private val fleet = FleetClient(pool, schema)
    private val workers = ArrayList<FleetWorker>()
    private lateinit var studio: TrellisStudio
    private lateinit var client: StudioClient

    @BeforeAll
    fun start() {
        studio = TrellisStudio.builder(fleet.store).graph(TestGraphs.simple).fleet(fleet).start()
        client = StudioClient(studio.url)
    }

    @AfterAll
    fun stop() {
        workers.forEach { it.shutdown(Duration.ofSeconds(10)) }
        if (::studio.isInitialized) studio.close()
        fleet.close()
        pool.close()
        TestPostgres.dropSchema(schema)
    }

    private fun worker(id: String, version: Int): FleetWorker = FleetWorker(
        pool,
        FleetWorkerOptions(
            schema = schema,
            workerId = id,
            concurrency = 4,
            leaseDuration = Duration.ofSeconds(5),
            pollInterval = Duration.ofMillis(200),
        ),
    ).register(TestGraphs.simple, version).start().also { workers += it }

    private fun sql(statement: String) = pool.connection.use { c -> c.createStatement().use { it.execute(statement) } }

    private val JsonElement.text: String? get() = if (this is JsonNull) null else jsonPrimitive.content

    private fun JsonObject.str(name: String): String? = this[name]?.text

    @Test
    @Order(1)
    fun `before the fleet's tables exist the studio shows an empty fleet and creates nothing`() {
        val overview = client.get("/api/v1/fleet").obj
        overview.str("schema") shouldBe schema
        overview.str("tables") shouldBe "false"
        overview["graphs"]!!.jsonArray.shouldBeEmpty()
        overview["lostClaims"]!!.jsonArray.shouldBeEmpty()
        client.get("/api/v1/fleet/runs").obj["runs"]!!.jsonArray.shouldBeEmpty()
        client.get("/api/v1/runs/nope/fleet").apply {
            status shouldBe 404
            error shouldContain "not in the fleet's queue"
        }
        runBlocking { fleet.hasQueue() } shouldBe false
    }

    @Test
    @Order(2)
    fun `runs of the fleet carry their queue rows, and queued ones are listed before they start`(): Unit =
        runBlocking {
            worker("studio-w1", 1)
            val done = fleet.submit(
                Submission.of(TestGraphs.simple, 1, stateOf(Doc.topic to "fleets"), runId = "fleet-1"),
            ).await()
            done.status shouldBe FleetStatus.COMPLETED
            val later = Instant.now().plusSeconds(3_600)
            fleet.submit(Submission("simple", 1, """{"topic": "later"}""", "fleet-later", 5, later))

            val overview = client.get("/api/v1/fleet").obj
            overview.str("tables") shouldBe "true"
            val simple = overview["graphs"]!!.jsonArray.single().jsonObject
            simple.str("graphId") shouldBe "simple"
            simple.str("completed") shouldBe "1"
            simple.str("queued") shouldBe "1"

            val run = client.get("/api/v1/runs/fleet-1").obj
            run.str("status") shouldBe "COMPLETED"
            val row = run["fleet"]!!.jsonObject
            row.str("status") shouldBe "COMPLETED"
            row.str("attempt") shouldBe "1"
            row.str("lostClaims") shouldBe "0"
            row.str("claimLapsed") shouldBe "false"
            listOf("submittedAt", "startedAt", "claimedAt", "heartbeatAt", "finishedAt").forEach {
                Instant.parse(row.str(it)!!)
            }
            val listed = client.get("/api/v1/runs").obj["runs"]!!.jsonArray.map { it.jsonObject }
            listed.single { it.str("runId") == "fleet-1" }["fleet"]!!.jsonObject.str("status") shouldBe "COMPLETED"
            client.get("/api/v1/runs/fleet-1/fleet").obj.str("worker") shouldBe null

            // Queued and never started: no run in the store yet, but the queue has it.
            client.get("/api/v1/runs/fleet-later").status shouldBe 404
            client.get("/api/v1/runs/fleet-later/fleet").obj.str("priority") shouldBe "5"
            client.get("/api/v1/fleet/runs").obj["runs"]!!.jsonArray.map { it.jsonObject.str("runId") } shouldBe
                listOf("fleet-later")
            client.get("/api/v1/fleet/runs?status=COMPLETED").obj["runs"]!!.jsonArray.size shouldBe 1
            client.get("/api/v1/fleet/runs?status=SLEEPING").apply {
                status shouldBe 400
                error shouldContain "'status'"
            }
            client.get("/api/v1/fleet/runs?limit=0").status shouldBe 400
        }

    @Test
    @Order(3)
    fun `a claim lost by a dead worker is shown, then counted once another worker takes the run over`(): Unit =
        runBlocking {
            // Version 2 has a worker registered once, then gone: nobody claims its runs while the test looks.
            worker("studio-w2", 2).shutdown(Duration.ofSeconds(10))
            val later = Instant.now().plusSeconds(3_600)
            fleet.submit(Submission("simple", 2, """{"topic": "orphans"}""", "fleet-lost", 0, later))
            // What a worker that died while running it leaves: RUNNING, its lease lapsed a minute ago.
            sql(
                "UPDATE $schema.trellis_fleet_runs SET status = 'RUNNING', worker = 'dead-worker', attempt = 1, " +
                    "started_at = now() - interval '3 minutes', claimed_at = now() - interval '3 minutes', " +
                    "heartbeat_at = now() - interval '65 seconds', lease_until = now() - interval '1 minute' " +
                    "WHERE run_id = 'fleet-lost'",
            )
            val lost = client.get("/api/v1/fleet").obj["lostClaims"]!!.jsonArray.single().jsonObject
            lost.str("runId") shouldBe "fleet-lost"
            lost.str("worker") shouldBe "dead-worker"
            lost.str("claimLapsed") shouldBe "true"
            client.get("/api/v1/runs/fleet-lost/fleet").obj.str("claimLapsed") shouldBe "true"

            if (browser()) lostClaimInBrowser()

            worker("studio-w3", 2)
            withTimeout(60_000) {
                while (fleet.info("fleet-lost")?.status != FleetStatus.COMPLETED) delay(50)
            }
            val row = client.get("/api/v1/runs/fleet-lost").obj["fleet"]!!.jsonObject
            row.str("status") shouldBe "COMPLETED"
            row.str("lostClaims") shouldBe "1"
            row.str("attempt") shouldBe "2"
            client.get("/api/v1/fleet").obj["lostClaims"]!!.jsonArray.shouldBeEmpty()
            if (browser()) takenOverInBrowser()
        }

    @Test
    @Order(4)
    fun `a studio without a fleet says so`() {
        TrellisStudio.start(fleet.store).use { plain ->
            val other = StudioClient(plain.url)
            other.get("/api/v1/fleet").apply {
                status shouldBe 404
                error shouldContain "builder(store).fleet("
            }
            other.get("/api/v1/runs/fleet-1").obj["fleet"] shouldBe JsonNull
        }
    }

    // The browser part: the runs page's fleet panel and column, and a run page's queue row.

    private var chromium: Chromium? = null
    private var noBrowser = false

    /** Whether a browser runs here (opened once); without one the API part still runs (not on CI: see [Chromium]). */
    private fun browser(): Boolean {
        if (chromium == null && !noBrowser) {
            try {
                chromium = Chromium()
            } catch (e: TestAbortedException) {
                noBrowser = true
            }
        }
        return chromium != null
    }

    @AfterAll
    fun closeBrowser() {
        chromium?.close()
    }

    private fun lostClaimInBrowser() {
        val b = chromium!!
        b.driver.get(studio.url.trimEnd('/') + "/")
        b.waitFor("#lost-claims tr[data-run='fleet-lost']").text shouldContain "dead-worker"
        b.waitFor("#fleet-queued tr[data-run='fleet-later']")
        b.waitFor("#fleet-graphs tr[data-graph='simple@1']").text shouldContain "simple v1"
        b.waitFor("#runs tr[data-run='fleet-1'] td.fleet-col[data-fleet-status='COMPLETED']")
        b.screenshot("studio-fleet.png", at = "#fleet")
        b.driver.findElement(By.cssSelector("#lost-claims a")).click()
        b.waitFor("#fleet-row tr[data-field='claim lapsed']").text shouldContain "yes"
        b.driver.findElement(By.cssSelector("#fleet-row tr[data-field='worker']")).text shouldContain "dead-worker"
    }

    private fun takenOverInBrowser() {
        val b = chromium!!
        b.driver.get(studio.url.trimEnd('/') + "/run?id=fleet-lost")
        b.waitFor("#run-status[data-status='COMPLETED']")
        b.driver.findElement(By.cssSelector("#fleet-row tr[data-field='lost claims']")).text shouldContain "1"
        b.driver.findElement(By.cssSelector("#fleet-row tr[data-field='status']")).text shouldContain "COMPLETED"
        b.driver.get(studio.url.trimEnd('/') + "/")
        b.waitFor("#runs tr[data-run='fleet-lost'] td.fleet-col").text shouldContain "1 lost claim"
        b.all("#lost-claims tr[data-run]").size shouldBe 0
        listOf("fleet-1", "fleet-lost").forEach { b.waitFor("#runs tr[data-run='$it']") }
        b.all("#runs tr[data-run]").map { it.getAttribute("data-run") } shouldContainAll listOf("fleet-1", "fleet-lost")
    }
}
