package dev.trellis.test

import dev.trellis.test.replay.Redaction
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test

/**
 * The default redaction removes each kind of secret whatever the case of its field name, and leaves a text without
 * any untouched (its patterns run only on texts holding one of their words, so this also checks those words).
 */
class RedactionTest {
    private val default = Redaction.DEFAULT

    @Test
    fun `each default pattern redacts, in any case of its field name`() {
        default.apply("Authorization: BEARER abcdefghijklmnop1234") shouldBe "Authorization: BEARER <redacted>"
        default.apply("header bearer abcdefghijklmnop1234 sent") shouldBe "header bearer <redacted> sent"
        default.apply("my key is sk-abcdefghijklmnopqrstuvwx.") shouldBe "my key is <redacted>."
        default.apply("key=AIzaSyABCDEFGHIJKLMNOPQRSTUV") shouldBe "key=<redacted>"
        default.apply("{\"API_KEY\": \"s3cr3t-value\"}") shouldBe "{\"API_KEY\": \"<redacted>\"}"
        default.apply("apiKey=abc123&x=1") shouldBe "apiKey=<redacted>&x=1"
        default.apply("X-Api-Key: abc123") shouldBe "X-Api-Key: <redacted>"
        default.apply("Access_Token=abc123") shouldBe "Access_Token=<redacted>"
        default.apply("PASSWORD: hunter2") shouldBe "PASSWORD: <redacted>"
        default.apply("Secret = 42") shouldBe "Secret = <redacted>"
    }

    @Test
    fun `a text without a secret is returned as it is`() {
        val prompt = "Some notes the graph gathered earlier in the run. ".repeat(8) + "Question: what do they say?"
        default.apply(prompt) shouldBe prompt
        default.apply("the token count was high, the key point is clear") shouldBe
            "the token count was high, the key point is clear"
    }

    @Test
    fun `patterns and values of one's own run on every text`() {
        val own = Redaction.NONE.pattern("order-(\\d+)").value("hunter2")
        own.apply("order-1234 paid with hunter2") shouldBe "order-<redacted> paid with <redacted>"
        own.apply("nothing here") shouldBe "nothing here"
    }
}
