package dev.trellis.studio

import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/** Calls a studio's JSON API the way its pages do. */
class StudioClient(private val base: String, private val token: String? = null) {
    class Reply(val status: Int, val body: String) {
        val json: JsonElement get() = Json.parseToJsonElement(body)
        val obj: JsonObject get() = json.jsonObject
        val error: String get() = obj["error"]!!.jsonPrimitive.content

        override fun toString(): String = "$status $body"
    }

    private val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()

    fun get(path: String): Reply = send(HttpRequest.newBuilder(uri(path)).GET())

    fun post(path: String, body: String = "{}"): Reply =
        send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body)))

    private fun uri(path: String) = URI.create(base.substringBefore('?').trimEnd('/') + path)

    private fun send(builder: HttpRequest.Builder): Reply {
        builder.timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
        token?.let { builder.header("Authorization", "Bearer $it") }
        val response = http.send(builder.build(), HttpResponse.BodyHandlers.ofString())
        return Reply(response.statusCode(), response.body())
    }

    /** Polls run [runId] until its status is [status] (a generous real-time bound: the run is on other threads). */
    fun awaitStatus(runId: String, status: String, seconds: Int = 60): JsonObject = runBlocking {
        val until = System.nanoTime() + seconds * 1_000_000_000L
        var last: Reply
        do {
            last = get("/api/v1/runs/$runId")
            if (last.status == 200 && last.obj["status"]?.jsonPrimitive?.content == status &&
                last.obj["live"]?.jsonPrimitive?.content != "true"
            ) {
                return@runBlocking last.obj
            }
            delay(50.milliseconds)
        } while (System.nanoTime() < until)
        error("Run $runId did not reach $status in $seconds s; last: $last")
    }
}
