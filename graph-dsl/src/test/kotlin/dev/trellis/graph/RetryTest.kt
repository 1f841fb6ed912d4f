package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.property.Arb
import io.kotest.property.arbitrary.int
import io.kotest.property.checkAll
import java.io.IOException
import kotlin.random.Random
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class RetryTest : FunSpec({

    val random = Random(42)

    fun Retry.delays(attempts: IntRange): List<Duration> = attempts.map { delayBefore(it, random) }

    test("fixed waits the same delay before every retry") {
        val retry = Retry.fixed(maxAttempts = 3, delay = 200.milliseconds)
        retry.backoff shouldBe Retry.Backoff.FIXED
        retry.maxAttempts shouldBe 3
        retry.delays(2..5) shouldBe List(4) { 200.milliseconds }
    }

    test("linear grows by the initial delay and stops at the max delay") {
        val retry = Retry.linear(maxAttempts = 6, initialDelay = 100.milliseconds, maxDelay = 350.milliseconds)
        retry.delays(2..6) shouldBe listOf(100, 200, 300, 350, 350).map { it.milliseconds }
        retry.delayBefore(Int.MAX_VALUE, random) shouldBe 350.milliseconds
    }

    test("exponential multiplies the delay and stops at the max delay") {
        val retry = Retry.exponential(
            maxAttempts = 10,
            initialDelay = 100.milliseconds,
            multiplier = 2.0,
            maxDelay = 1.seconds,
        )
        retry.delays(2..7) shouldBe listOf(100, 200, 400, 800, 1000, 1000).map { it.milliseconds }
        retry.delayBefore(10_000, random) shouldBe 1.seconds
    }

    test("withMaxDelay caps every delay") {
        val retry = Retry.exponential(
            maxAttempts = 5,
            initialDelay = 1.seconds,
            multiplier = 3.0,
        ).withMaxDelay(2.seconds)
        retry.delays(2..4) shouldBe listOf(1.seconds, 2.seconds, 2.seconds)
    }

    test("exponential delays never shrink and never pass the max delay") {
        val retry = Retry.exponential(
            maxAttempts = 100,
            initialDelay = 10.milliseconds,
            multiplier = 1.5,
            maxDelay = 5.seconds,
        )
        checkAll(Arb.int(2..500)) { attempt ->
            val delay = retry.delayBefore(attempt, random)
            delay shouldBeLessThanOrEqualTo 5.seconds
            delay shouldBeGreaterThanOrEqualTo retry.delayBefore(attempt - 1, random)
        }
    }

    test("jitter stays within its fraction of the base delay") {
        val retry = Retry.exponential(
            maxAttempts = 5,
            initialDelay = 1.seconds,
            maxDelay = 1000.seconds,
        ).withJitter(0.25)
        val seeded = Random(7)
        val delays = List(1000) { retry.delayBefore(3, seeded) }
        delays.forEach {
            it shouldBeGreaterThanOrEqualTo 1500.milliseconds
            it shouldBeLessThanOrEqualTo 2500.milliseconds
        }
        (delays.min() < 1600.milliseconds) shouldBe true
        (delays.max() > 2400.milliseconds) shouldBe true
    }

    test("jitter never passes the max delay") {
        val retry = Retry.fixed(maxAttempts = 3, delay = 1.seconds).withJitter(0.5)
        val seeded = Random(1)
        repeat(1000) {
            val delay = retry.delayBefore(2, seeded)
            delay shouldBeGreaterThanOrEqualTo 500.milliseconds
            delay shouldBeLessThanOrEqualTo 1.seconds
        }
    }

    test("jitter drawn from the same seed gives the same delays") {
        val retry = Retry.linear(maxAttempts = 5).withJitter(1.0)
        val first = Random(99).let { r -> (2..5).map { retry.delayBefore(it, r) } }
        val second = Random(99).let { r -> (2..5).map { retry.delayBefore(it, r) } }
        first shouldBe second
    }

    test("retryOn decides which errors are retried, up to maxAttempts") {
        val retry = Retry.fixed(maxAttempts = 3).retryOn { it is IOException }
        retry.shouldRetry(IOException("down"), attempt = 1) shouldBe true
        retry.shouldRetry(IOException("down"), attempt = 2) shouldBe true
        retry.shouldRetry(IOException("down"), attempt = 3) shouldBe false
        retry.shouldRetry(IllegalStateException("bug"), attempt = 1) shouldBe false
    }

    test("withJitter and withMaxDelay keep the predicate and the other settings") {
        val retry = Retry.exponential(maxAttempts = 4, initialDelay = 50.milliseconds, multiplier = 3.0)
            .retryOn { it is IOException }
            .withJitter(0.1)
            .withMaxDelay(1.seconds)
        retry.shouldRetry(IllegalStateException(), 1) shouldBe false
        retry.shouldRetry(IOException(), 1) shouldBe true
        retry.maxAttempts shouldBe 4
        retry.multiplier shouldBe 3.0
        retry.initialDelay shouldBe 50.milliseconds
        retry.jitter shouldBe 0.1
        retry.maxDelay shouldBe 1.seconds
    }

    test("NONE never retries") {
        Retry.NONE.maxAttempts shouldBe 1
        Retry.NONE.shouldRetry(IOException(), 1) shouldBe false
    }

    test("a max delay below the initial delay is raised to it by the factories") {
        Retry.linear(3, initialDelay = 2.seconds, maxDelay = 1.seconds).maxDelay shouldBe 2.seconds
        Retry.exponential(3, initialDelay = 2.seconds, maxDelay = 1.seconds).maxDelay shouldBe 2.seconds
    }

    test("invalid arguments are rejected with what was wrong") {
        shouldThrow<IllegalArgumentException> { Retry.fixed(0) }.message shouldBe
            "Retry.maxAttempts must be at least 1 (1 = no retry), but was 0."
        shouldThrow<IllegalArgumentException> { Retry.fixed(2, delay = (-1).milliseconds) }.message shouldContain
            "Retry.initialDelay must not be negative, but was -1ms"
        shouldThrow<IllegalArgumentException> { Retry.exponential(multiplier = 0.5) }.message shouldContain
            "Retry.multiplier must be at least 1.0, but was 0.5"
        shouldThrow<IllegalArgumentException> { Retry.fixed(2).withJitter(1.5) }.message shouldContain
            "Retry.jitter must be between 0.0 and 1.0, but was 1.5"
        shouldThrow<IllegalArgumentException> { Retry.fixed(2).withJitter(-0.1) }
        shouldThrow<IllegalArgumentException> {
            Retry.exponential(
                initialDelay = 1.seconds,
            ).withMaxDelay(1.milliseconds)
        }
            .message shouldContain "Retry.maxDelay (1ms) must be at least initialDelay (1s)"
    }
})
