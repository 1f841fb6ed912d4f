package dev.trellis.studio.internal

import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.runtime.CheckpointFormatException
import io.ktor.http.ContentType
import io.ktor.http.Cookie
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationCallPipeline
import io.ktor.server.application.call
import io.ktor.server.request.header
import io.ktor.server.request.path
import io.ktor.server.response.header
import io.ktor.server.response.respondBytes
import io.ktor.server.response.respondText
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import kotlinx.coroutines.CancellationException
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import java.security.MessageDigest

/** The studio's server: the token check, the pages and assets from the jar, and the JSON API (`/api/v1`). */
internal fun Application.studioModule(studio: Studio) {
    val token = studio.token
    if (token != null) {
        intercept(ApplicationCallPipeline.Plugins) {
            val given = call.request.header(HttpHeaders.Authorization)?.removePrefix("Bearer ")?.trim()
                ?: call.request.queryParameters["token"]
                ?: call.request.cookies[TOKEN_COOKIE]
            if (given == null || !same(given, token)) {
                call.respondText(
                    """{"error":"This Trellis Studio needs its token: open the URL it printed (with ?token=…) """ +
                        """or send the header 'Authorization: Bearer <token>'."}""",
                    ContentType.Application.Json,
                    HttpStatusCode.Unauthorized,
                )
                finish()
            } else if (call.request.queryParameters["token"] != null) {
                call.response.cookies.append(Cookie(TOKEN_COOKIE, token, path = "/", httpOnly = true))
            }
        }
    }
    val api = StudioApi(studio)
    val actions = StudioActions(studio)
    routing {
        get("/") { call.asset("runs.html") }
        get("/run") { call.asset("run.html") }
        get("/assets/{name}") { call.asset(call.parameters["name"]!!) }
        get("/api/v1") { call.json { api.about() } }
        get("/api/v1/graphs") { call.json { api.graphs() } }
        get("/api/v1/runs") { call.json { api.runs(call.request.queryParameters) } }
        get("/api/v1/runs/{id}") { call.json { api.run(call.parameters["id"]!!) } }
        get("/api/v1/runs/{id}/timeline") {
            val q = call.request.queryParameters
            call.json { api.timeline(call.parameters["id"]!!, q["from"], q["to"]) }
        }
        get("/api/v1/runs/{id}/checkpoints") { call.json { api.checkpoints(call.parameters["id"]!!) } }
        get("/api/v1/runs/{id}/checkpoints/{sequence}") {
            call.json { api.checkpoint(call.parameters["id"]!!, sequence(call.parameters["sequence"], "sequence")) }
        }
        get("/api/v1/runs/{id}/diff") {
            val q = call.request.queryParameters
            call.json { api.diff(call.parameters["id"]!!, sequence(q["from"], "from"), sequence(q["to"], "to")) }
        }
        get("/api/v1/runs/{id}/events") { call.json { api.events(call.parameters["id"]!!) } }
        get("/api/v1/runs/{id}/fleet") { call.json { api.fleetRun(call.parameters["id"]!!) } }
        get("/api/v1/fleet") { call.json { api.fleet() } }
        get("/api/v1/fleet/runs") { call.json { api.fleetRuns(call.request.queryParameters) } }
        get("/api/v1/runs/{id}/events/stream") { streamEvents(studio, call) }
        actions.install(this)
    }
}

private const val TOKEN_COOKIE = "trellis_studio_token"

private fun same(a: String, b: String) = MessageDigest.isEqual(a.toByteArray(), b.toByteArray())

internal fun sequence(text: String?, name: String): Long = text?.toLongOrNull()?.takeIf { it >= 1 }
    ?: badRequest("Parameter '$name' must be a checkpoint sequence (1, 2, …), but was '${text ?: ""}'.")

/** Answers with the JSON [block] returns ([status]), or the error it throws as `{"error": message}`. */
internal suspend fun ApplicationCall.json(
    status: HttpStatusCode = HttpStatusCode.OK,
    block: suspend () -> JsonElement,
) {
    val (code, body) = try {
        status to block()
    } catch (e: CancellationException) {
        throw e
    } catch (e: ApiException) {
        e.status to error(e.message)
    } catch (e: RunOwnedException) {
        HttpStatusCode.Conflict to error(e.message)
    } catch (e: CheckpointFormatException) {
        HttpStatusCode.UnprocessableEntity to error(e.message)
    } catch (e: IllegalArgumentException) {
        HttpStatusCode.BadRequest to error(e.message)
    } catch (e: IllegalStateException) {
        HttpStatusCode.Conflict to error(e.message)
    }
    response.header(HttpHeaders.CacheControl, "no-store")
    respondText(body.toString(), ContentType.Application.Json, code)
}

private fun error(message: String?) = buildJsonObject { put("error", message ?: "unknown error") }

private suspend fun ApplicationCall.asset(name: String) {
    val type = when (name.substringAfterLast('.')) {
        "html" -> ContentType.Text.Html
        "css" -> ContentType.Text.CSS
        "js" -> ContentType.Text.JavaScript
        "svg" -> ContentType.Image.SVG
        else -> ContentType.Application.OctetStream
    }
    val bytes = if (name.matches(Regex("[a-z0-9-]+\\.[a-z]+"))) {
        Studio::class.java.getResourceAsStream("/dev/trellis/studio/assets/$name")?.use { it.readBytes() }
    } else {
        null
    }
    if (bytes == null) {
        respondText("No such page or asset: ${request.path()}", ContentType.Text.Plain, HttpStatusCode.NotFound)
    } else {
        respondBytes(bytes, type)
    }
}
