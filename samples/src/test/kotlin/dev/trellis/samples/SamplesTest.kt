package dev.trellis.samples

import dev.trellis.graph.NodeError
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.Handoff
import dev.trellis.langchain4j.SwarmState
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Test

/** Each sample's main logic, run in virtual time, with its outcome asserted. */
class SamplesTest {
    private fun TestScope.context() = SampleContext(StandardTestDispatcher(testScheduler), testScheduler.timeSource)

    private suspend fun TestScope.runSample(sample: Sample): Pair<SampleOutcome, List<RunEvent>> {
        val events = ArrayList<RunEvent>()
        val outcome = sample.run(context()) { events += it }
        return outcome to events
    }

    @Test
    fun `research plans, searches in parallel, retries the flaky tool once, loops to draft 3 and publishes`() = runTest {
        val (outcome, events) = runSample(ResearchSample)
        val result = outcome.result
        result.status shouldBe Status.COMPLETED
        result.node("search-news").attempts shouldBe 2
        result.node("search-web").attempts shouldBe 1
        result.node("write").executions shouldBe ResearchSample.ACCEPT_AT
        result.node("review").executions shouldBe ResearchSample.ACCEPT_AT
        result.node("collect").executions shouldBe 1
        result.nodes.filterKeys { it != "search-fallback" }.values.map { it.status }.toSet() shouldBe
            setOf(Status.COMPLETED)
        result.node("search-fallback").status shouldBe Status.PENDING // the flaky search recovered on its retry
        result.state[Research.findings].size shouldBe 4
        result.state[Research.review] shouldBe "ACCEPT draft 3"
        result.state[Research.published] shouldStartWith "Report on 'Why is the sky blue?' (draft 3)"
        events.filterIsInstance<RunEvent.NodeRetrying>().map { it.nodeId } shouldContainExactly listOf("search-news")
        events.filterIsInstance<RunEvent.Custom>().any { it.payload is SearchProgress } shouldBe true
        outcome.notes.last() shouldBe "models: scripted"
        outcome.notes[1] shouldStartWith "cost meter (interceptor): "
        outcome.notes[1].substringAfter(": ").substringBefore(" tokens").toLong() shouldBeGreaterThan
            result.state[Research.published].length.toLong()
    }

    @Test
    fun `research falls back through an error route when a search still fails after its retries`() = runTest {
        val tools = ResearchSample.Tools(newsFailures = 3)
        val events = ArrayList<RunEvent>()
        val result = ResearchSample.graph(tools).events(
            stateOf(Research.question to ResearchSample.QUESTION),
            RunOptions(dispatcher = StandardTestDispatcher(testScheduler), timeSource = testScheduler.timeSource),
        ).toList(events).last().let { (it as RunEvent.RunCompleted).result }
        result.status shouldBe Status.COMPLETED
        result.errors shouldBe emptyList()
        tools.news.calls.get() shouldBe 3
        result.node("search-news").status shouldBe Status.FAILED
        result.node("search-news").attempts shouldBe 3
        result.node("search-fallback").executions shouldBe 1
        result.state[Research.searchError] shouldBe
            NodeError("search-news", "java.io.IOException", "news timed out (simulated, call 3)", 3)
        result.state[Research.findings] shouldContain "[news] unavailable after 3 attempts; no findings"
        result.state[Research.findings].size shouldBe 4
        result.node("collect").executions shouldBe 1
        result.state[Research.review] shouldBe "ACCEPT draft 3"
        events.filterIsInstance<RunEvent.NodeFailed>().single().routedTo shouldBe "search-fallback"
    }

    @Test
    fun `research searches overlap in time`() = runTest {
        val (_, events) = runSample(ResearchSample)
        val searchStarts = events.filterIsInstance<RunEvent.NodeStarted>().filter { it.nodeId.startsWith("search-") }
        val firstSearchEnd = events.indexOfFirst { it is RunEvent.NodeCompleted && it.nodeId.startsWith("search-") }
        searchStarts.size shouldBe 4
        searchStarts.all { events.indexOf(it) < firstSearchEnd } shouldBe true
    }

    @Test
    fun `basics chains three nodes`() = runTest {
        val result = runSample(BasicsSample).first.result
        result.status shouldBe Status.COMPLETED
        result.state[Greeting.greeting] shouldBe "HELLO, TRELLIS!"
        result.state[Greeting.visits] shouldBe 42
        result.state[Greeting.log] shouldContainExactly listOf("greeted", "counted", "shouted")
    }

    @Test
    fun `routing sends each ticket to exactly one handler`() = runTest {
        val results = runSample(RoutingSample).first.results
        results.map { it.state[Ticket.category] } shouldContainExactly listOf("billing", "tech", "other")
        results.map {
            r ->
            listOf("billing", "tech", "other").filter { r.node(it).status == Status.COMPLETED }
        } shouldContainExactly
            listOf(listOf("billing"), listOf("tech"), listOf("other"))
        results[0].node("tech").status shouldBe Status.PENDING
    }

    @Test
    fun `fanout folds every parallel update with reducers and joins once`() = runTest {
        val result = runSample(FanoutSample).first.result
        result.status shouldBe Status.COMPLETED
        val expected = FanoutSample.letters.associateWith { l -> FanoutSample.TEXT.count { it.toString() == l } }
        result.state[WordCount.counts] shouldBe expected
        result.state[WordCount.total] shouldBe expected.values.sum()
        result.node("join").executions shouldBe 1
    }

    @Test
    fun `cancellation ends the slow node and the run CANCELLED without its writes`() = runTest {
        val (outcome, events) = runSample(CancellationSample)
        val result = outcome.result
        result.status shouldBe Status.CANCELLED
        result.node("prepare").status shouldBe Status.COMPLETED
        result.node("process").status shouldBe Status.CANCELLED
        result.node("report").status shouldBe Status.PENDING
        result.state[Batch.processed] shouldBe 0
        events.last().javaClass shouldBe RunEvent.RunCancelled::class.java
        events.filterIsInstance<RunEvent.Custom>().size shouldBe CancellationSample.CANCEL_AFTER
    }

    @Test
    fun `agents reused across concurrent runs see only their own conversation`() = runTest {
        val results = runSample(AgentsSample).first.results
        results.map { it.status }.toSet() shouldBe setOf(Status.COMPLETED)
        for (result in results) {
            val user = result.state[Conversation.user]
            result.state[Conversation.greeting] shouldBe "I know 2 message(s); users I know: [$user]"
            result.state[Conversation.recall] shouldBe "I know 2 message(s); users I know: []"
        }
    }

    @Test
    fun `handoff sends each ticket from triage to the agent that handles it, with a reason`() = runTest {
        val (outcome, events) = runSample(HandoffSample)
        outcome.results.map { it.status } shouldBe listOf(Status.COMPLETED, Status.COMPLETED)
        outcome.results.map { it.state[SwarmState.activeAgent] } shouldBe listOf("billing", "tech")
        outcome.results.map { it.state[SwarmState.handoffs] } shouldBe listOf(
            listOf(Handoff("triage", "billing", "a double charge")),
            listOf(Handoff("triage", "tech", "a crash")),
        )
        outcome.results.first().state[SwarmState.answer] shouldBe "Refunded ch_2; you will see it in 3 days."
        events.filterIsInstance<RunEvent.Custom>().map { it.path to it.payload }.filter { it.second is Handoff }
            .map { it.first } shouldBe listOf("triage", "triage")
        outcome.notes.last() shouldBe "refunds made: 1"
    }

    @Test
    fun `json lines carry type, sequence, runId, timestamp and node`() = runTest {
        val (_, events) = runSample(ResearchSample)
        val lines = events.map { Json.parseToJsonElement(it.toJson().toString()).jsonObject }
        lines.map { it.getValue("sequence").jsonPrimitive.content.toLong() } shouldBe events.indices.map { it.toLong() }
        lines.first().getValue("type").jsonPrimitive.content shouldBe "RunStarted"
        lines.last().getValue("type").jsonPrimitive.content shouldBe "RunCompleted"
        val retry = lines.single { it.getValue("type").jsonPrimitive.content == "NodeRetrying" }
        retry.getValue("node").jsonPrimitive.content shouldBe "search-news"
        lines.all { it.containsKey("runId") && it.containsKey("timestamp") } shouldBe true
    }

    @Test
    fun `json state values keep their JSON types - lists are arrays, maps objects, numbers numbers`() = runTest {
        val research = runSample(ResearchSample).second.last().toJson().getValue("state").jsonObject
        val findings = research.getValue("findings").jsonArray.map { it.jsonPrimitive.content }
        findings.size shouldBe 4
        findings.map { it.substringBefore(']') }.toSet() shouldBe setOf("[web", "[papers", "[news", "[code")
        research.getValue("drafts").jsonPrimitive.int shouldBe ResearchSample.ACCEPT_AT
        research.getValue("question").jsonPrimitive.content shouldBe "Why is the sky blue?"

        val fanout = runSample(FanoutSample).second
        val input = fanout.first().toJson().getValue("input").jsonObject
        input.keys shouldBe setOf("text", "total", "counts", "report")
        val state = fanout.last().toJson().getValue("state").jsonObject
        val counts = state.getValue("counts").jsonObject.mapValues { it.value.jsonPrimitive.int }
        val expected = FanoutSample.letters.associateWith { letter -> FanoutSample.TEXT.count { "$it" == letter } }
        counts shouldBe expected
        state.getValue("total").jsonPrimitive.int shouldBe expected.values.sum()
    }

    @Test
    fun `every sample is listed by name`() {
        Samples.all.map { it.name } shouldContainExactly
            listOf(
                "research",
                "basics",
                "routing",
                "fanout",
                "mapreduce",
                "cancellation",
                "agents",
                "handoff",
                "java",
                "temporal",
            )
        Samples.named(Samples.DEFAULT) shouldBe ResearchSample
    }
}
