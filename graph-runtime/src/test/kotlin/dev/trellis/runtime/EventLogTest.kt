package dev.trellis.runtime

import dev.trellis.runtime.internal.events.EVENT_BUFFER
import dev.trellis.runtime.internal.events.EventLog
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Test
import java.time.Instant
import java.util.concurrent.atomic.AtomicInteger

/** The run's one ordering point of events (`EventLog`, `docs/semantics.md` §8): order, no loss, backpressure. */
class EventLogTest {
    private val at = Instant.EPOCH

    private fun custom(sequence: Long, producer: Int, n: Int) =
        RunEvent.Custom("log-test", sequence, at, "p$producer", 1, n)

    @Test
    fun `concurrent producers - delivery order is sequence order, nothing lost, each producer keeps its order`(): Unit =
        runBlocking {
            val producers = 8
            val each = 3_000
            val log = EventLog()
            val received = ArrayList<RunEvent>()
            coroutineScope {
                launch(Dispatchers.Default) {
                    try {
                        (0 until producers).map { p ->
                            async(Dispatchers.Default) {
                                for (n in 0 until each) {
                                    if (log.full) log.awaitRoom(cancellable = true)
                                    log.add { seq -> custom(seq, p, n) }
                                }
                            }
                        }.awaitAll()
                    } finally {
                        log.close()
                    }
                }
                while (true) {
                    val event = log.poll() ?: if (log.awaitEvent()) continue else break
                    received += event
                }
            }
            received.size shouldBe producers * each
            received.map { it.sequence } shouldBe received.indices.map { it.toLong() }
            for (p in 0 until producers) {
                val mine = received.filter { (it as RunEvent.Custom).nodeId == "p$p" }
                mine.map { (it as RunEvent.Custom).payload } shouldBe (0 until each).toList()
            }
        }

    @Test
    fun `a producer that waits for room is at most EVENT_BUFFER events ahead of a reader that stopped reading`(): Unit =
        runBlocking {
            val log = EventLog()
            val added = AtomicInteger()
            val blocked = CompletableDeferred<Unit>()
            val producer = launch(Dispatchers.Default) {
                repeat(10 * EVENT_BUFFER) { n ->
                    if (log.full) {
                        blocked.complete(Unit)
                        log.awaitRoom(cancellable = true)
                    }
                    log.add { seq -> custom(seq, 0, n) }
                    added.incrementAndGet()
                }
                log.close()
            }
            blocked.await()
            added.get() shouldBe EVENT_BUFFER
            // Reading lets it go on; everything arrives, in order.
            val received = withContext(Dispatchers.Default) {
                val all = ArrayList<RunEvent>()
                while (true) {
                    val event = log.poll() ?: if (log.awaitEvent()) continue else break
                    (added.get() - all.size) shouldBeLessThanOrEqual EVENT_BUFFER + 1
                    all += event
                }
                all
            }
            producer.join()
            received.map { (it as RunEvent.Custom).payload } shouldBe (0 until 10 * EVENT_BUFFER).toList()
            received.map { it.sequence } shouldBe received.indices.map { it.toLong() }
        }

    @Test
    fun `a reader that stops releases the producers waiting for room, cancellable or not`(): Unit = runBlocking {
        val log = EventLog()
        repeat(EVENT_BUFFER) { n -> log.add { seq -> custom(seq, 0, n) } }
        log.full shouldBe true
        val waiting = listOf(true, false).map { cancellable ->
            launch(Dispatchers.Default) { log.awaitRoom(cancellable) }
        }
        log.cancel()
        waiting.forEach { it.join() }
        log.full shouldBe false
    }

    @Test
    fun `an event that cannot be built leaves no hole the reader would wait for`(): Unit = runBlocking {
        val log = EventLog()
        log.add { seq -> custom(seq, 0, 0) }
        runCatching { log.add { _ -> error("no event") } }.isFailure shouldBe true
        log.add { seq -> custom(seq, 0, 2) }
        log.close()
        val received = ArrayList<RunEvent>()
        while (true) received += log.poll() ?: if (log.awaitEvent()) continue else break
        received.map { (it as RunEvent.Custom).payload } shouldBe listOf(0, 2)
    }
}
