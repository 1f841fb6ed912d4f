package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

class ValidationTest : FunSpec({

    fun schema() = object : StateSchema("v") {
        @Suppress("unused")
        val count = key("count", default = 0)
    }

    fun problemsOf(block: GraphBuilder.() -> Unit): List<String> =
        shouldThrow<GraphValidationException> { graph("g", schema(), block) }.problems

    /** The single problem of [block], which must also name [fragment] and say what to do. */
    fun singleProblem(block: GraphBuilder.() -> Unit): String = problemsOf(block).let {
        it shouldHaveSize 1
        it.single()
    }

    val ghost = NodeRef.of("ghost")

    test("a valid graph builds") {
        val g = graph("ok", schema()) {
            val a = node("a") { }
            start(a)
        }
        g.nodes.map { it.id } shouldBe listOf("a")
    }

    test("an edge from an unknown node names it, lists the nodes and says how to declare it") {
        val problem = singleProblem {
            val a = node("a") { }
            start(a)
            ghost then a
        }
        problem shouldContain "unknown node 'ghost'"
        problem shouldContain "node(\"ghost\")"
        problem shouldContain "Nodes: a"
    }

    test("an edge to an unknown node names it and says how to declare it") {
        val problem = singleProblem {
            val a = node("a") { }
            start(a)
            a then ghost
        }
        problem shouldContain "leads to unknown node 'ghost'"
        problem shouldContain "declare it with node(\"ghost\")"
    }

    test("a conditional edge to an unknown node is reported") {
        singleProblem {
            val a = node("a") { }
            start(a)
            a.then(ghost) { true }
        } shouldContain "unknown node 'ghost'"
    }

    test("a route to an unknown node is reported; END is a valid route target") {
        val problem = singleProblem {
            val a = node("a") { }
            start(a)
            a.route(ghost, END) { END }
        }
        problem shouldContain "leads to unknown node 'ghost'"
    }

    test("an unknown entry point is reported with how to fix it") {
        val problem = singleProblem {
            node("a") { }
            start(NodeRef.of("a"), ghost)
        }
        problem shouldContain "Entry point 'ghost' is not a node"
        problem shouldContain "node(\"ghost\")"
    }

    test("END as an entry point is rejected") {
        singleProblem {
            val a = node("a") { }
            start(a, END)
        } shouldContain "END cannot be an entry point"
    }

    test("a duplicate node id names the id and the count") {
        val problem = singleProblem {
            val a = node("a") { }
            node("a") { }
            start(a)
        }
        problem shouldContain "Node id 'a' is declared 2 times"
        problem shouldContain "rename one"
    }

    test("a graph without entry point says to call start") {
        singleProblem {
            node("a") { }
        } shouldContain "no entry point; call start(node)"
    }

    test("an unreachable node is named with the entry points and how to fix it") {
        val problem = singleProblem {
            val a = node("a") { }
            val b = node("b") { }
            node("island") { }
            start(a)
            a then b
        }
        problem shouldContain "Node 'island' is unreachable from the entry points [a]"
        problem shouldContain "add an edge or route to it, or remove it"
    }

    test("a node reachable only from an unreachable node is unreachable too") {
        problemsOf {
            val a = node("a") { }
            val x = node("x") { }
            val y = node("y") { }
            start(a)
            x then y
        }.map { it.substringBefore(" is") } shouldBe listOf("Node 'x'", "Node 'y'")
    }

    test("duplicate key names in a schema are reported") {
        val dup = object : StateSchema("dup") {
            @Suppress("unused")
            val first = key("name", default = "a")

            @Suppress("unused")
            val second = key("name", default = 1)
        }
        val e = shouldThrow<GraphValidationException> {
            graph("g", dup) { start(node("a") { }) }
        }
        e.problems.single() shouldContain "State schema 'dup' declares key 'name' 2 times"
        e.problems.single() shouldContain "rename one"
    }

    test("reserved and blank key names are reported") {
        val reserved = object : StateSchema("res") {
            @Suppress("unused")
            val internal = key("__internal", default = 0)

            @Suppress("unused")
            val blank = key(" ", default = 0)
        }
        val problems = shouldThrow<GraphValidationException> {
            graph("g", reserved) { start(node("a") { }) }
        }.problems
        problems shouldHaveSize 2
        problems[0] shouldContain "'__internal' in schema 'res' is reserved"
        problems[0] shouldContain "rename it"
        problems[1] shouldContain "blank name"
    }

    for (id in listOf(Graph.END, "__start__", "END", "START", "__mine")) {
        test("node id '$id' is reserved") {
            val problem = problemsOf {
                val a = node("a") { }
                val r = node(id) { }
                start(a)
                a then r
            }.first()
            problem shouldContain "Node id '$id' is reserved"
            problem shouldContain "choose another id"
        }
    }

    test("a blank node id is reported") {
        problemsOf {
            val a = node("a") { }
            val blank = node("") { }
            start(a)
            a then blank
        }.single() shouldContain "blank id"
    }

    test("an edge out of END is reported") {
        val problem = singleProblem {
            val a = node("a") { }
            start(a)
            END then a
        }
        problem shouldContain "leaves END"
        problem shouldContain "remove the edge"
    }

    test("a duplicate plain edge is reported once") {
        singleProblem {
            val a = node("a") { }
            val b = node("b") { }
            start(a)
            a then b
            a then b
        } shouldContain "Edge a -> b is declared twice; remove the duplicate"
    }

    test("a plain and a conditional edge between the same nodes are allowed") {
        graph("g", schema()) {
            val a = node("a") { }
            val b = node("b") { }
            start(a)
            a then b
            a.then(b) { true }
        }.edges shouldHaveSize 2
    }

    test("a route without targets is reported") {
        singleProblem {
            val a = node("a") { }
            start(a)
            a.route { END }
        } shouldContain "Route from 'a' declares no targets; list every node (or END)"
    }

    test("a route with duplicate targets names them") {
        singleProblem {
            val a = node("a") { }
            val b = node("b") { }
            start(a)
            a.route(b, b, END, END) { END }
        } shouldContain "Route from 'a' lists [b, __end__] more than once; list each target once"
    }

    test("bad config values are each reported with their value") {
        val problems = problemsOf {
            start(node("a") { })
            config {
                maxNodeExecutions = 0
                maxConcurrency = -1
                executionTimeout = Duration.ZERO
                defaultNodeTimeout = (-1).seconds
            }
        }
        problems shouldHaveSize 4
        problems[0] shouldContain "maxNodeExecutions must be at least 1, but was 0"
        problems[1] shouldContain "maxConcurrency must be at least 1, but was -1"
        problems[2] shouldContain "executionTimeout must be positive, but was 0s; use null for no limit"
        problems[3] shouldContain "defaultNodeTimeout must be positive, but was -1s; use null for no limit"
    }

    test("the smallest legal config values build") {
        val g = graph("g", schema()) {
            start(node("a") { })
            config {
                maxNodeExecutions = 1
                maxConcurrency = 1
                executionTimeout = 1.seconds
                defaultNodeTimeout = 1.seconds
            }
        }
        g.config.maxNodeExecutions shouldBe 1
        g.config.maxConcurrency shouldBe 1
    }

    test("a non-positive node timeout is reported") {
        for (timeout in listOf(Duration.ZERO, (-5).seconds)) {
            singleProblem {
                start(node("slow", timeout = timeout) { })
            } shouldContain "Node 'slow' has timeout $timeout; a timeout must be positive"
        }
    }

    test("every problem is reported at once, in one exception") {
        val broken = object : StateSchema("broken") {
            @Suppress("unused")
            val a = key("k", default = 0)

            @Suppress("unused")
            val b = key("k", default = 0)
        }
        val e = shouldThrow<GraphValidationException> {
            graph("everything", broken) {
                val a = node("a", timeout = Duration.ZERO) { }
                node("a") { }
                val end = node("END") { }
                start(a, ghost)
                a then ghost
                a then end
                a then end
                ghost then a
                END then a
                a.route { END }
                a.route(end, end) { end }
                config {
                    maxNodeExecutions = 0
                    maxConcurrency = 0
                }
            }
        }
        e.graphId shouldBe "everything"
        val expected = listOf(
            "maxNodeExecutions must be at least 1",
            "maxConcurrency must be at least 1",
            "declares key 'k' 2 times",
            "Node id 'a' is declared 2 times",
            "Node 'a' has timeout 0s",
            "Node id 'END' is reserved",
            "Entry point 'ghost' is not a node",
            "leads to unknown node 'ghost'",
            "Edge a -> END is declared twice",
            "leaves unknown node 'ghost'",
            "leaves END",
            "Route from 'a' declares no targets",
            "Route from 'a' lists [END] more than once",
        )
        for (fragment in expected) {
            e.problems.filter { fragment in it }.shouldNotBeEmpty()
        }
        e.problems shouldHaveSize expected.size
        e.message shouldStartWith "Graph 'everything' is invalid (${expected.size} problems):\n  - "
        e.problems.forEach { e.message shouldContain it }
    }

    test("an unreachable node is reported together with problems that do not hide it") {
        val problems = problemsOf {
            val a = node("a", timeout = Duration.ZERO) { }
            node("START") { }
            start(a)
            config { maxConcurrency = 0 }
        }
        problems shouldHaveSize 4
        problems.filter { "maxConcurrency" in it }.shouldNotBeEmpty()
        problems.filter { "Node 'a' has timeout" in it }.shouldNotBeEmpty()
        problems.filter { "Node id 'START' is reserved" in it }.shouldNotBeEmpty()
        problems.filter { "Node 'START' is unreachable" in it }.shouldNotBeEmpty()
    }

    test("a single problem is worded in the singular") {
        shouldThrow<GraphValidationException> {
            graph("one", schema()) { node("a") { } }
        }.message shouldStartWith "Graph 'one' is invalid (1 problem):"
    }

    test("a failed build does not freeze the schema") {
        val s = object : StateSchema("open") {}
        shouldThrow<GraphValidationException> { graph("g", s) { node("a") { } } }
        s.key("later", default = 1).name shouldBe "later"
    }
})
