package dev.trellis.graph.spec

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** A format 0 spec (one graph at the top level, `condition` on edges) loads through the migration to format 1. */
class SpecMigrationTest : FunSpec({
    val format0 = """
        format: 0
        id: loop
        state:
          schema: doc
          keys:
            topic: {type: string}
            notes: {type: list<string>, default: [], reducer: append}
            drafts: {type: int, default: 0}
            review: {type: string, default: ""}
            approval: {type: string, default: ""}
            error: {type: "NodeError?", default: null}
        start: [write]
        nodes:
          write: {handler: write}
          review: {handler: review}
        edges:
          - {from: write, to: review, condition: accepted}
    """.trimIndent()

    test("a format 0 spec loads as the format 1 document it migrates to, and exports as format 1") {
        val registry = Handlers.registry()
        val graph = GraphSpec.load(format0, registry)
        graph.id shouldBe "loop"
        graph.nodes.map { it.id } shouldBe listOf("write", "review")
        val yaml = GraphSpec.toYaml(graph, registry)
        yaml.lines().first() shouldBe "format: 1"
        yaml shouldContain "when: accepted"
        GraphSpec.toYaml(GraphSpec.load(yaml, registry), registry) shouldBe yaml
    }

    test("problems of a migrated spec point where the author wrote them") {
        val e = shouldThrow<GraphSpecException> {
            GraphSpec.load(format0.replace("condition: accepted", "condition: acepted"), Handlers.registry())
        }
        val problem = e.problems.single()
        problem.line shouldBe 17
        problem.pointer shouldBe "/edges/0/condition"
        problem.message shouldContain "did you mean 'accepted'?"
    }
})
