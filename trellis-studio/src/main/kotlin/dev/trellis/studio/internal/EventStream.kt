package dev.trellis.studio.internal

import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.ApplicationCall
import io.ktor.server.response.header
import io.ktor.server.response.respondBytesWriter
import io.ktor.server.response.respondText
import io.ktor.utils.io.ByteWriteChannel
import io.ktor.utils.io.writeStringUtf8
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/**
 * `GET /api/v1/runs/{id}/events/stream`: the run's events as server-sent events (`event: run-event`, data one JSON
 * event), those so far first, then each as it happens, and `event: end` when the run ends (or at once for a run that
 * is not live). 404 for a run this studio has no events of.
 */
internal suspend fun streamEvents(studio: Studio, call: ApplicationCall) {
    val runId = call.parameters["id"]!!
    val followed = studio.live.follow(runId)
    if (followed == null) {
        val body = buildJsonObject {
            put(
                "error",
                "Run '$runId' is not live in this studio (it did not start, resume or fork it, and nothing recorded " +
                    "its events); its page shows it from its checkpoints.",
            )
        }
        call.respondText(body.toString(), ContentType.Application.Json, HttpStatusCode.NotFound)
        return
    }
    val (past, channel) = followed
    call.response.header(HttpHeaders.CacheControl, "no-store")
    call.respondBytesWriter(ContentType.Text.EventStream) {
        try {
            for (event in past) send("run-event", eventJson(event).toString())
            flush()
            if (channel != null) {
                for (event in channel) {
                    send("run-event", eventJson(event).toString())
                    flush()
                }
            }
            send("end", "{}")
            flush()
        } finally {
            channel?.let { studio.live.unfollow(runId, it) }
        }
    }
}

private suspend fun ByteWriteChannel.send(event: String, data: String) {
    writeStringUtf8("event: $event\ndata: $data\n\n")
}
