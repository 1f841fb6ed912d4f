package dev.trellis.graph.spec

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files

class HostileSpecTest : FunSpec({
    fun problems(text: String): List<SpecProblem> =
        shouldThrow<GraphSpecException> { GraphSpec.load(text, Handlers.registry()) }.problems

    fun graph(id: String, nodes: String) =
        "  $id:\n    state: {schema: doc, keys: {topic: {type: string}, notes: {type: list<string>, default: [], " +
            "reducer: append}, drafts: {type: int, default: 0}, review: {type: string, default: \"\"}, " +
            "approval: {type: string, default: \"\"}, error: {type: \"NodeError?\", default: null}}}\n" +
            "    start: [a]\n    nodes:\n$nodes"

    test("an unknown handler is refused, naming the registered ones") {
        val text = "format: 1\ngraphs:\n" + graph("g", "      a: {handler: rm-rf}\n")
        problems(text).single().message shouldContain "no node is registered as 'rm-rf'; register it with " +
            "node(\"rm-rf\", ...)"
    }

    test("a class name is only a name: nothing is loaded by it") {
        val text = "format: 1\ngraphs:\n" + graph("g", "      a: {handler: java.lang.Runtime}\n")
        problems(text).single().message shouldContain "no node is registered as 'java.lang.Runtime'"
    }

    test("deep nesting is refused before it is read") {
        val text = "format: 1\ngraphs: " + "[".repeat(10_000) + "]".repeat(10_000)
        val problem = problems(text).single()
        problem.message shouldContain "more than ${GraphSpec.MAX_DEPTH} levels deep"
    }

    test("a 10 MB spec is refused without being parsed, as text and as a file") {
        val big = "format: 1\n" + "#".repeat(10 * 1024 * 1024)
        problems(big).single().message shouldContain "the limit is ${GraphSpec.MAX_CHARS}"
        val file = Files.createTempFile("huge", ".yaml")
        try {
            Files.writeString(file, big)
            val e = shouldThrow<GraphSpecException> { GraphSpec.load(file, Handlers.registry()) }
            e.problems.single().message shouldContain "the limit is ${GraphSpec.MAX_CHARS}"
        } finally {
            Files.delete(file)
        }
    }

    test("duplicate ids are refused where the second one is") {
        val text = "format: 1\ngraphs:\n" + graph("g", "      a: {handler: plan}\n      a: {handler: write}\n")
        val problem = problems(text).single()
        problem.message shouldContain "declares 'a' twice"
        problem.line shouldBe 8
    }

    test("graphs that reference each other in a cycle are refused") {
        val text = "format: 1\nmain: x\ngraphs:\n" +
            graph("x", "      a: {subgraph: {graph: y}}\n") + graph("y", "      a: {subgraph: {graph: x}}\n")
        val problem = problems(text).single()
        problem.message shouldContain "cycle (x -> y -> x)"
    }

    test("a graph that references itself is a cycle too") {
        val text = "format: 1\ngraphs:\n" + graph("x", "      a: {subgraph: {graph: x}}\n")
        problems(text).single().message shouldContain "cycle (x -> x)"
    }

    test("anchors and aliases, which can blow a document up, are refused") {
        val text = "format: 1\ngraphs:\n  a: &g {state: {}}\n  b: *g\n"
        problems(text).single().message shouldContain "Anchors and aliases"
    }
})
