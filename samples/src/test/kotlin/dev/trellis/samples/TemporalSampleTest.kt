package dev.trellis.samples

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.util.concurrent.CopyOnWriteArrayList

/**
 * `trellis-samples temporal` (real time: the research graph on Temporal's in-process test server): it completes, and
 * the console gets the run's events live, the search nodes' progress among them.
 */
class TemporalSampleTest {
    @Test
    fun `the research graph runs on Temporal and streams its events`() {
        Samples.named("temporal") shouldBe TemporalSample
        val events = CopyOnWriteArrayList<RunEvent>()
        val outcome = runBlocking { TemporalSample.run(SampleContext()) { events += it } }

        outcome.result.status shouldBe Status.COMPLETED
        outcome.result.state[Research.published] shouldContain "Report on 'Why is the sky blue?'"
        events.first().shouldBeInstanceOf<RunEvent.RunStarted>()
        events.last().shouldBeInstanceOf<RunEvent.RunCompleted>()
        events.filterIsInstance<RunEvent.Custom>().map { it.payload.toString() } shouldContain "web: 1 result(s)"
        outcome.notes.single() shouldContain "on Temporal's test server: COMPLETED"
    }
}
