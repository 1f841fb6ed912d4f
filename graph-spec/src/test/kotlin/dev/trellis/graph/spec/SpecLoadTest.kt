package dev.trellis.graph.spec

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.InMemoryNodeCache
import dev.trellis.graph.Graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlin.time.Duration.Companion.seconds

class SpecLoadTest : FunSpec({
    test("a spec with every kind of node and edge loads and runs, interrupt and error route included") {
        val graph = GraphSpec.load(spec("review.yaml"), Handlers.registry())
        graph.id shouldBe "review"
        graph.schema shouldBe Doc
        graph.node("plan").timeout shouldBe 30.seconds
        graph.node("plan").retry!!.maxAttempts shouldBe 3
        graph.node("ask").subgraph!!.id shouldBe "part"
        val store = InMemoryCheckpointStore()
        val options = RunOptions(checkpointing = Checkpointing(store), cache = InMemoryNodeCache())
        val paused = graph.invoke(stateOf(Doc.topic to "sky"), options)
        paused.status shouldBe Status.INTERRUPTED
        paused.state[Doc.drafts] shouldBe 2
        val done = graph.resume(paused.runId, options, "yes")
        done.status shouldBe Status.COMPLETED
        done.state[Doc.notes].shouldContainExactly("plan sky", "recovered from publish")
    }

    test("JSON is read like YAML") {
        val registry = Handlers.registry()
        val graph = GraphSpec.load(spec("review.yaml"), registry)
        val again = GraphSpec.load(GraphSpec.toJson(graph, registry), registry)
        GraphSpec.toYaml(again, registry) shouldBe GraphSpec.toYaml(graph, registry)
    }

    test("a loaded graph is drawn by Mermaid like the DSL graph it equals") {
        val registry = Handlers.registry()
        val dsl = dev.trellis.graph.graph("review", Doc) {
            val plan = node("plan", body = Handlers.plan)
            val write = node("write", body = Handlers.write)
            val review = node("review", body = Handlers.review)
            start(plan)
            plan then write
            write then review
            review.route(write, END, selector = Handlers.pick)
            review.then(plan, Handlers.accepted)
        }
        val loaded: Graph = GraphSpec.load(GraphSpec.toYaml(dsl, registry), registry)
        loaded.toMermaid() shouldBe dsl.toMermaid()
        loaded.toMermaid(showSlices = true) shouldBe dsl.toMermaid(showSlices = true)
    }
})
