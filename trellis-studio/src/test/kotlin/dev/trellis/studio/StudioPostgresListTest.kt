package dev.trellis.studio

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.RunQuery
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * The runs page over 100,000 runs in PostgreSQL (`docs/performance.md`, "Studio"): the runs and their two checkpoints
 * are written with one `INSERT … SELECT generate_series` each (run-000001 first, a second apart), then the first
 * page, a deep page and a filtered page, newest first, and a deep page by run id are timed through the HTTP API.
 * The bound asserted is generous (a loaded machine); the figures are printed.
 */
class StudioPostgresListTest {
    @Test
    fun `a page of runs answers fast with 100,000 runs in PostgreSQL`() {
        val schema = TestPostgres.newSchema()
        val pool = HikariDataSource(
            HikariConfig().apply {
                dataSource = TestPostgres.dataSource
                maximumPoolSize = 4
            },
        )
        try {
            val store = PostgresCheckpointStore(pool, schema)
            runBlocking { store.runs(RunQuery(limit = 1)) } // creates the tables
            seed(pool, schema)
            TrellisStudio.start(store).use { studio ->
                val client = StudioClient(studio.url)
                repeat(3) { client.get("/api/v1/runs").status shouldBe 200 } // warm up
                val first = median(client, "/api/v1/runs")
                val deep = median(client, "/api/v1/runs?after=run-010000")
                val failed = median(client, "/api/v1/runs?status=FAILED&after=run-050000")
                val byId = median(client, "/api/v1/runs?order=id&after=run-090000")

                // Newest first (the default): run-100000 was created last.
                fun firstOf(path: String) =
                    client.get(path).obj["runs"]!!.jsonArray.first().jsonObject["runId"]!!.jsonPrimitive.content
                firstOf("/api/v1/runs") shouldBe "run-100000"
                client.get("/api/v1/runs?after=run-010000").obj["runs"]!!.jsonArray.size shouldBe 50
                firstOf("/api/v1/runs?after=run-010000") shouldBe "run-009999"
                firstOf("/api/v1/runs?status=FAILED&after=run-050000") shouldBe "run-049990"
                firstOf("/api/v1/runs?order=id&after=run-090000") shouldBe "run-090001"
                println(
                    "Studio runs page, 100,000 runs in PostgreSQL: first page $first ms, deep page $deep ms, " +
                        "filtered page $failed ms, deep page by run id $byId ms (median of 11)",
                )
                for (ms in listOf(first, deep, failed, byId)) assertTrue(ms < 2_000) { "a page took $ms ms" }
            }
        } finally {
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    private fun median(client: StudioClient, path: String): Long = List(11) {
        val start = System.nanoTime()
        client.get(path).status shouldBe 200
        (System.nanoTime() - start) / 1_000_000
    }.sorted()[5]

    private fun seed(pool: HikariDataSource, schema: String) {
        val payload =
            """{"scope":"run","schemaVersion":1,"createdAt":"2026-01-01T00:00:00Z","data":{"graphId":"bench",""" +
                """"runId":"r","status":"COMPLETED","stateSchema":"doc","stateVersion":1,"state":{"topic":"t"},""" +
                """"version":1,"totalExecutions":1,"nodes":{"write":{"count":1,"status":"COMPLETED"}}}}"""
        pool.connection.use { c ->
            c.createStatement().use { s ->
                s.execute(
                    """
                    INSERT INTO $schema.trellis_runs (run_id, graph_id, owner, lease_until, epoch, latest_sequence,
                        latest_status, created_at)
                    SELECT 'run-' || lpad(i::text, 6, '0'), 'bench', NULL, NULL, 1, 2,
                           CASE WHEN i % 10 = 0 THEN 'FAILED' WHEN i % 10 = 1 THEN 'INTERRUPTED' ELSE 'COMPLETED' END,
                           1767225600000 + i * 1000
                    FROM generate_series(1, 100000) AS i
                    """.trimIndent(),
                )
                s.execute(
                    """
                    INSERT INTO $schema.trellis_checkpoints (run_id, sequence, parent_sequence, forked_from_run,
                        forked_from_sequence, graph_id, schema_version, created_at, status, kind, payload, metadata)
                    SELECT 'run-' || lpad(i::text, 6, '0'), n, CASE WHEN n = 1 THEN NULL ELSE 1 END, NULL, NULL, 'bench', 1,
                           CASE WHEN n = 1 THEN '2026-01-01T00:00:00Z' ELSE '2026-01-01T00:00:01.500Z' END,
                           CASE WHEN n = 1 THEN 'RUNNING' ELSE 'COMPLETED' END, 'FULL', '$payload', '{}'
                    FROM generate_series(1, 100000) AS i, generate_series(1, 2) AS n
                    """.trimIndent(),
                )
                s.execute("ANALYZE $schema.trellis_runs")
                s.execute("ANALYZE $schema.trellis_checkpoints")
            }
        }
    }
}
