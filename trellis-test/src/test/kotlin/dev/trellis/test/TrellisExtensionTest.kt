package dev.trellis.test

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.runtime.Status
import dev.trellis.test.context.StoreKind
import dev.trellis.test.context.TrellisTestContext
import dev.trellis.test.junit.TrellisTest
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldEndWith
import io.kotest.matchers.types.shouldBeInstanceOf
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import org.junit.jupiter.api.io.TempDir
import org.junit.platform.engine.discovery.DiscoverySelectors.selectClass
import org.junit.platform.testkit.engine.EngineTestKit
import java.nio.file.Files
import java.nio.file.Path
import kotlin.time.Duration.Companion.minutes

@TrellisTest
class TrellisExtensionTest {
    @Test
    fun `each test gets a fresh store and runs in virtual time`(trellis: TrellisTestContext, store: CheckpointStore) {
        store shouldBe trellis.store
        store.shouldBeInstanceOf<InMemoryCheckpointStore>()
        val slow = dev.trellis.graph.graph("slow", Loop) {
            start(node("wait") { kotlinx.coroutines.delay(10.minutes) })
        }
        val result = trellis.run(slow)
        result.status shouldBe Status.COMPLETED
        result.duration shouldBe java.time.Duration.ofMinutes(10) // virtual: the test took no ten minutes
        trellis.run(loopGraph)
        trellis.trajectory().assertNodeCount("draft", 3).assertStateAfter("draft", 2, Loop.drafts, 2)
        trellis.runs.size shouldBe 2
    }

    @Test
    @TrellisTest(store = StoreKind.SQLITE)
    fun `a SQLite store in a temporary file`(trellis: TrellisTestContext) {
        trellis.storeKind shouldBe StoreKind.SQLITE
        trellis.storeLocation shouldEndWith "checkpoints.db"
        trellis.run(loopGraph).status shouldBe Status.COMPLETED
        trellis.trajectory().assertStateAfter("publish", Loop.log, "published 3")
    }

    @Test
    @TrellisTest(store = StoreKind.POSTGRES)
    fun `a PostgreSQL store in a schema of its own, dropped afterwards`(trellis: TrellisTestContext) {
        trellis.storeLocation shouldContain "schema trellis_test_"
        trellis.run(loopGraph).status shouldBe Status.COMPLETED
        trellis.trajectory().assertNodeCount("review", 3)
    }

    @Test
    fun `a failing test's runs are written as timeline pages and published in its report`(
        @TempDir dir: Path,
    ) {
        System.setProperty("trellis.timelines.dir", dir.toString())
        System.setProperty(FailingGraphCase.ENABLED, "true")
        try {
            val results = EngineTestKit.engine(
                "junit-jupiter",
            ).selectors(selectClass(FailingGraphCase::class.java)).execute()
            results.testEvents().failed().count() shouldBe 1
            val entries = results.allEvents().reportingEntryPublished().list()
                .mapNotNull { it.getPayload(org.junit.platform.engine.reporting.ReportEntry::class.java).orElse(null) }
                .flatMap { it.keyValuePairs.entries }
            val page = Path.of(entries.single { it.key == "trellis.timeline" }.value)
            page.toString() shouldContain FailingGraphCase::class.java.name
            Files.readString(page) shouldContain "<html"
            Files.readString(page) shouldContain "publish"
        } finally {
            System.clearProperty("trellis.timelines.dir")
            System.clearProperty(FailingGraphCase.ENABLED)
        }
    }

    /** Run by the test above through the JUnit test kit only (it is disabled otherwise). */
    @TrellisTest
    @EnabledIfSystemProperty(named = FailingGraphCase.ENABLED, matches = "true")
    class FailingGraphCase {
        companion object {
            const val ENABLED = "trellis.test.failingCase"
        }

        @Test
        fun `fails after a run`(trellis: TrellisTestContext) {
            trellis.run(loopGraph)
            trellis.trajectory().assertNodeCount("publish", 2)
        }
    }
}
