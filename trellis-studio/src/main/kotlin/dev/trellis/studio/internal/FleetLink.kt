package dev.trellis.studio.internal

import dev.trellis.fleet.FleetClient
import dev.trellis.fleet.FleetRunInfo
import dev.trellis.fleet.FleetStatus
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray

/**
 * The fleet's view of runs (`docs/studio.md`, "Fleet"), read through [FleetClient]'s read-only calls: the queue rows
 * of the runs on a page, the counts by graph, the claims lost now. It never creates the fleet's tables and never
 * writes a row. Only this class names the fleet's types, so a studio without a fleet needs no `trellis-fleet-postgres`
 * on its class path.
 */
internal class FleetLink(private val client: FleetClient) {
    val schema: String get() = client.schema

    /** The queue rows of [runIds] that the queue has, as JSON by run id. */
    suspend fun rows(runIds: Collection<String>): Map<String, JsonObject> =
        client.infos(runIds).associate { it.runId to json(it) }

    /** Run [runId]'s queue row as JSON, or null when the queue has no such run. */
    suspend fun row(runId: String): JsonObject? = client.info(runId)?.let(::json)

    /** The schema, whether the tables exist, the counts by graph version and the claims lost now. */
    suspend fun overview(): JsonObject {
        val tables = client.hasQueue()
        val counts = if (tables) client.counts() else emptyList()
        val lost = if (tables) client.lostClaims(LIMIT).map(::json) else emptyList()
        return buildJsonObject {
            put("schema", client.schema)
            put("tables", tables)
            putJsonArray("graphs") {
                for (g in counts) {
                    addJsonObject {
                        put("graphId", g.graphId)
                        put("graphVersion", g.graphVersion)
                        put("queued", g.queued)
                        put("running", g.running)
                        put("paused", g.paused)
                        put("completed", g.completed)
                        put("failed", g.failed)
                    }
                }
            }
            put("lostClaims", JsonArray(lost))
        }
    }

    /** Up to [limit] runs of the queue in [status], oldest submission first (QUEUED ones may not have started yet). */
    suspend fun runs(status: String, limit: Int): JsonArray {
        val fleetStatus = FleetStatus.entries.firstOrNull { it.name == status } ?: badRequest(
            "Parameter 'status' must be one of ${FleetStatus.entries.joinToString()} (a fleet status), but was " +
                "'$status'.",
        )
        if (!client.hasQueue()) return JsonArray(emptyList())
        return JsonArray(client.list(fleetStatus, limit).map(::json))
    }

    private fun json(info: FleetRunInfo): JsonObject = buildJsonObject {
        put("runId", info.runId)
        put("graphId", info.graphId)
        put("graphVersion", info.graphVersion)
        put("status", info.status.name)
        put("worker", info.worker)
        put("attempt", info.attempt)
        put("lostClaims", info.lostClaims)
        put("claimLapsed", info.claimLapsed)
        put("priority", info.priority)
        put("submittedAt", info.submittedAt?.toString())
        put("startedAt", info.startedAt?.toString())
        put("claimedAt", info.claimedAt?.toString())
        put("heartbeatAt", info.heartbeatAt?.toString())
        put("leaseUntil", info.leaseUntil?.toString())
        put("finishedAt", info.finishedAt?.toString())
        put("error", info.error?.let { fold(it, 300) })
    }

    private companion object {
        const val LIMIT = 100
    }
}
