package dev.trellis.temporal

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.testing.ChildJvm
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.temporal.client.WorkflowClient
import io.temporal.serviceclient.WorkflowServiceStubs
import io.temporal.serviceclient.WorkflowServiceStubsOptions
import io.temporal.testserver.TestServer
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.postgresql.ds.PGSimpleDataSource
import java.io.File
import java.net.ServerSocket
import java.nio.file.Files
import kotlin.time.Duration.Companion.seconds

/**
 * Live events across JVMs (`docs/temporal.md`, "Live events across JVMs"): a Temporal test server bound to a port in
 * this JVM, a worker in a child JVM publishing to PostgreSQL (each event twice), and the caller here streaming the run
 * live — exactly the local run's events, each once — and a late caller streaming it again from its start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresLiveEventsTest {
    private val port = ServerSocket(0).use { it.localPort }
    private val server = TestServer.createPortBoundServer(port)
    private val stubs = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:$port").build(),
    )
    private val client = WorkflowClient.newInstance(stubs)
    private val table = "trellis_live_" + TestPostgres.newSchema().removePrefix("trellis_test_")
    private val dataSource = TestPostgres.dataSource
    private val release = Files.createTempFile("trellis-live-release", "").also { Files.delete(it) }
    private val out = File.createTempFile("trellis-live-worker", ".log")
    private val live = PostgresLiveEvents(dataSource, table)
    private val worker: Process = ChildJvm.start(
        LiveWorkerChild::class.java,
        listOf(port.toString(), QUEUE, (dataSource as PGSimpleDataSource).getURL(), table, release.toString()),
        out,
    )

    @AfterAll
    fun tearDown() {
        worker.destroyForcibly().waitFor()
        live.close()
        stubs.shutdownNow()
        server.close()
        Files.deleteIfExists(release)
        dataSource.connection.use { c -> c.createStatement().use { it.execute("DROP TABLE IF EXISTS $table") } }
    }

    @Test
    fun `a caller in another JVM streams the run live, exactly the local run's events, each once`(): Unit =
        runBlocking {
            val graph = CrossJvmGraph.graph(release)
            val runner = TemporalRunner(client, QUEUE, live)
            val run = runner.start(graph, runId = "cross-jvm-1")
            val streamed = ArrayList<RunEvent>()
            withClue({ "worker output: ${ChildJvm.output(out)}" }) {
                withTimeout(180.seconds) {
                    run.events().collect { event ->
                        streamed += event
                        // The node waits for this file: payloads that reach us before it exists came live.
                        val payloads = streamed.filterIsInstance<RunEvent.Custom>().map { it.payload.toString() }
                        if (payloads == listOf("tok-1", "42")) Files.createFile(release)
                    }
                }
            }
            run.awaitBlocking().status shouldBe Status.COMPLETED

            // The local run of the same graph (the release file exists now: it does not wait).
            val local = CrossJvmGraph.graph(release).events().toList()
            streamed.map(CrossJvmGraph::describe) shouldBe local.map(CrossJvmGraph::describe)
            local.zip(streamed).all { (l, r) -> CrossJvmGraph.payloadSequenceOk(l, r) } shouldBe true
            streamed.map { it.javaClass.simpleName }.toSet() shouldContainAll
                setOf(
                    "RunStarted",
                    "NodeStarted",
                    "Custom",
                    "NodeRetrying",
                    "NodeCompleted",
                    "EdgeTaken",
                    "RunCompleted",
                )
            val completed = streamed.last() as RunEvent.RunCompleted
            completed.result.state[CrossJvmGraph.S.log] shouldBe listOf("talked", "last")
            completed.result.node("flaky").attempts shouldBe 2

            // The channel repeated: payloads were published live by the activity and again by the workflow (each of
            // those twice); the table holds each (key, workflow task) once, the stream each key once.
            val rows = rows("cross-jvm-1")
            rows.size shouldBeGreaterThan streamed.size
            rows.toSet().size shouldBe rows.size

            // A caller who comes late gets the whole run from its start, through another instance too.
            val late = PostgresLiveEvents(dataSource, table).use { other ->
                withTimeout(
                    60.seconds,
                ) { TemporalRunner(client, QUEUE, other).attach(graph, "cross-jvm-1").events().toList() }
            }
            late.map(CrossJvmGraph::describe) shouldBe local.map(CrossJvmGraph::describe)
        }

    /** The run's rows: node, execution, attempt, sequence and workflow task of each. */
    private fun rows(runId: String): List<String> = dataSource.connection.use { c ->
        c.prepareStatement(
            "SELECT node, execution, attempt, seq, task_execution, task_started FROM $table WHERE run_id = ? ORDER BY pos",
        ).use { s ->
            s.setString(1, runId)
            s.executeQuery().use { rs ->
                buildList {
                    while (rs.next()) add((1..6).joinToString("/") { rs.getString(it) })
                }
            }
        }
    }

    private companion object {
        const val QUEUE = "trellis-cross-jvm"
    }
}
