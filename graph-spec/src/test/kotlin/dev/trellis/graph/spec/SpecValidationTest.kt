package dev.trellis.graph.spec

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

class SpecValidationTest : FunSpec({
    fun problems(text: String): List<SpecProblem> =
        shouldThrow<GraphSpecException> { GraphSpec.load(text, Handlers.registry()) }.problems

    test("every problem of a spec is reported at once, each at its line and column with its fix") {
        val found = problems(spec("broken.yaml")).map { "${it.line}:${it.column} ${it.pointer} ${it.message}" }
        val expected = listOf(
            "7:23 /graphs/review/state/keys/topic/type" to "unknown type 'strin'",
            "8:38 /graphs/review/state/keys/drafts/default" to "the default is not of type int",
            "9:59 /graphs/review/state/keys/notes/reducer" to "no reducer is registered as 'concat'",
            "12:23 /graphs/review/nodes/plan/handler" to "no node is registered as 'plann' (did you mean 'plan'?)",
            "12:39 /graphs/review/nodes/plan/timeout" to "must be a positive duration",
            "13:31 /graphs/review/nodes/write/colour" to "has no field 'colour'",
            "14:13 /graphs/review/nodes/both" to "must have exactly one of handler, interrupt, subgraph, map",
            "16:26 /graphs/review/edges/0/to" to "names node 'wirte', which graph 'review' does not declare (did " +
                "you mean 'write'?)",
            "17:45 /graphs/review/edges/1/when/key" to "reads key 'draft', which the state does not declare",
            "18:9 /graphs/review/edges/2" to "a route needs 'targets'",
        )
        found shouldHaveSize expected.size
        found.zip(expected).forEach { (actual, want) ->
            actual shouldContain want.first
            actual shouldContain want.second
        }
    }

    test("a spec without a format, or with a newer one, is refused with what to do") {
        problems("graphs: {}").single().message shouldContain "add `format: 1`"
        problems("format: 7\ngraphs: {}").single().message shouldContain "newer than this version of Trellis reads"
    }

    test("malformed YAML is reported where the parser stopped") {
        val problem = problems("format: 1\ngraphs: [unclosed\n").single()
        problem.message shouldContain "not well-formed"
        problem.line shouldBe 3
    }

    test("JSON problems carry their line and column too") {
        val json = """
            {"format": 1, "graphs": {"g": {"state": {"keys": {"topic": {"type": "string"}}},
              "start": ["a"], "nodes": {"a": {"handler": "nope"}}}}}
        """.trimIndent()
        val problem = problems(json).single()
        problem.pointer shouldBe "/graphs/g/nodes/a/handler"
        problem.line shouldBe 2
        problem.column shouldBe 46
    }
})
