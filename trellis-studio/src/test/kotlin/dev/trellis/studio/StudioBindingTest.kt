package dev.trellis.studio

import dev.trellis.checkpoint.InMemoryCheckpointStore
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.net.ConnectException
import java.net.Inet4Address
import java.net.NetworkInterface
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration

/**
 * Where the studio listens: the loopback address only by default — not reachable through this machine's other
 * addresses — and elsewhere only with a token, which a request carries as a header or, once, as `?token=`, which sets
 * a cookie for the pages.
 */
class StudioBindingTest {
    private val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()

    private fun get(url: String, cookie: String? = null): HttpResponse<String> {
        val request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
        cookie?.let { request.header("Cookie", it) }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString())
    }

    /** An address of this machine other than loopback, by which another machine would reach it. */
    private fun otherAddress(): String? = NetworkInterface.networkInterfaces().toList()
        .filter { it.isUp && !it.isLoopback }
        .flatMap { it.inetAddresses().toList() }
        .firstOrNull { it is Inet4Address && !it.isLoopbackAddress }?.hostAddress

    @Test
    fun `by default it answers on the loopback address only`() {
        val address = otherAddress()
        assumeTrue(address != null, "This machine has no address but loopback: nothing else to try.")
        TrellisStudio.start(InMemoryCheckpointStore()).use { studio ->
            studio.url shouldStartWith "http://127.0.0.1:"
            get(studio.url + "api/v1").statusCode() shouldBe 200
            assertThrows<ConnectException> { get("http://$address:${studio.port}/api/v1") }
        }
        // The same address reaches a studio told to listen on every interface, with its token only.
        TrellisStudio.builder(InMemoryCheckpointStore()).host("0.0.0.0").token("bind-token-1").start().use { studio ->
            val base = "http://$address:${studio.port}/"
            get(base + "api/v1").statusCode() shouldBe 401
            get(base + "api/v1").body() shouldContain "needs its token"
            // Opening the printed URL once sets an HTTP-only cookie; the pages' later requests carry it.
            val opened = get("$base?token=bind-token-1")
            opened.statusCode() shouldBe 200
            val cookie = opened.headers().firstValue("Set-Cookie").orElseThrow()
            cookie shouldContain "HttpOnly"
            get(base + "api/v1/runs", cookie.substringBefore(';')).statusCode() shouldBe 200
            get(base + "api/v1/runs", "trellis_studio_token=wrong-token").statusCode() shouldBe 401
        }
    }
}
