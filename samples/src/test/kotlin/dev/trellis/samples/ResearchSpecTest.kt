package dev.trellis.samples

import dev.trellis.graph.spec.GraphSpec
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.nio.file.Path

/** The research sample loaded from its YAML spec (`research --spec`) runs like the Kotlin one and draws like it. */
class ResearchSpecTest {
    private val file: Path = Path.of("src/main/resources/dev/trellis/samples/research.yaml")

    @Test
    fun `research --spec runs the spec's graph with the sample's registry, like the DSL graph`() = runTest {
        val context = SampleContext(StandardTestDispatcher(testScheduler), testScheduler.timeSource, spec = file)
        val events = ArrayList<RunEvent>()
        val result = ResearchSample.run(context) { events += it }.result
        result.status shouldBe Status.COMPLETED
        result.node("search-news").attempts shouldBe 2
        result.node("write").executions shouldBe ResearchSample.ACCEPT_AT
        result.state[Research.review] shouldBe "ACCEPT draft 3"
        result.state[Research.published] shouldStartWith "Report on 'Why is the sky blue?' (draft 3)"
        events.filterIsInstance<RunEvent.NodeRetrying>().map { it.nodeId } shouldContainExactly listOf("search-news")
        result.meters.getValue(CostMeter.TOKENS) shouldBe
            ResearchSample.run(SampleContext(StandardTestDispatcher(testScheduler), testScheduler.timeSource)) { }
                .result.meters.getValue(CostMeter.TOKENS)
    }

    @Test
    fun `the shipped spec file is the class path resource, and draws like the DSL graph but for its routing rule`() {
        file.toFile().readText() shouldBe ResearchSpec.text()
        val tools = ResearchSample.Tools()
        val registry = ResearchSpec.registry(tools, ResearchModels.scripted())
        val loaded = GraphSpec.load(ResearchSpec.text(), registry)
        val dsl = ResearchSample.graph(tools)
        val routing = Regex(" -\\. (route|if 1|otherwise) \\.-> ")
        loaded.toMermaid().lines().filterNot { routing.containsMatchIn(it) } shouldBe
            dsl.toMermaid().lines().filterNot { routing.containsMatchIn(it) }
        loaded.toMermaid().lines().filter { routing.containsMatchIn(it) } shouldBe
            listOf("    n8 -. if 1 .-> n9", "    n8 -. otherwise .-> n7")
        GraphSpec.toYaml(loaded, registry).lines().first() shouldBe "format: 1"
    }
}
