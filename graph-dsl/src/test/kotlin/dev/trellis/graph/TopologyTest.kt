package dev.trellis.graph

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

class TopologyTest : FunSpec({

    val schema = object : StateSchema("topology") {}

    /** Builds a graph whose entry is the first node and whose plain edges are [edges] ("a>b"). */
    fun topologyOf(vararg edges: String): Graph = graph("t", schema) {
        val pairs = edges.map { it.substringBefore('>') to it.substringAfter('>') }
        val refs = pairs.flatMap { it.toList() }.distinct().associateWith { node(it) { } }
        start(refs.getValue(pairs.first().first))
        for ((from, to) in pairs) refs.getValue(from) then refs.getValue(to)
    }

    fun Graph.upstream(m: String, n: String): Boolean = topology.isUpstream(topology.indexOf(m), topology.indexOf(n))

    fun Graph.upstreamOf(n: String): Set<String> = nodes.map { it.id }.filter { upstream(it, n) }.toSet()

    test("in a diamond the join has every other node upstream, the branches do not see each other") {
        val g = topologyOf("a>b", "a>c", "b>d", "c>d")
        g.upstreamOf("d") shouldBe setOf("a", "b", "c")
        g.upstreamOf("b") shouldBe setOf("a")
        g.upstreamOf("c") shouldBe setOf("a")
        g.upstreamOf("a") shouldBe emptySet()
        g.backEdges shouldBe emptyList()
    }

    test("in a loop upstream follows forward edges only: the back edge does not make later nodes upstream") {
        val g = topologyOf("a>b", "b>c", "c>a")
        g.upstream("a", "b") shouldBe true
        g.upstream("b", "a") shouldBe false
        g.upstreamOf("a") shouldBe emptySet()
        g.upstreamOf("b") shouldBe setOf("a")
        g.upstreamOf("c") shouldBe setOf("a", "b")
        g.backEdges.map { it.toString() } shouldBe listOf("c -> a")
    }

    test("the branches of a diamond inside a loop are not upstream of each other") {
        val g = topologyOf("s>plan", "plan>a", "plan>b", "a>merge", "b>merge", "merge>check", "check>plan")
        g.upstreamOf("a") shouldBe setOf("s", "plan")
        g.upstreamOf("b") shouldBe setOf("s", "plan")
        g.upstreamOf("merge") shouldBe setOf("s", "plan", "a", "b")
        g.upstreamOf("plan") shouldBe setOf("s")
        g.backEdges.map { it.toString() } shouldBe listOf("check -> plan")
    }

    test("a node that loops on itself is not upstream of itself") {
        val g = topologyOf("a>b", "b>b", "b>c")
        g.upstream("b", "b") shouldBe false
        g.upstreamOf("c") shouldBe setOf("a", "b")
        g.backEdges.map { it.toString() } shouldBe listOf("b -> b")
    }

    test("nodes after a loop are downstream of it, not upstream") {
        val g = topologyOf("a>b", "b>c", "c>b", "c>d")
        g.upstreamOf("d") shouldBe setOf("a", "b", "c")
        g.upstream("d", "b") shouldBe false
        g.upstreamOf("b") shouldBe setOf("a")
    }

    test("upstream bit sets span several words") {
        val ids = (0 until 130).map { "n$it" }
        val g = topologyOf(*ids.zipWithNext { a, b -> "$a>$b" }.toTypedArray())
        g.topology.size shouldBe 130
        g.upstream("n0", "n129") shouldBe true
        g.upstream("n64", "n65") shouldBe true
        g.upstream("n65", "n64") shouldBe false
        g.upstreamOf("n129").size shouldBe 129
        g.upstreamOf("n70") shouldBe (0 until 70).map { "n$it" }.toSet()
    }

    test("compiled edges index their targets, END as -1, and flag back edges") {
        val g = graph("compiled", schema) {
            val a = node("a") { }
            val b = node("b") { }
            start(a)
            a then b
            b.route(a, END) { END }
        }
        val t = g.topology
        t.indexOf("b") shouldBe 1
        t.indexOf(Graph.END) shouldBe -1
        t.indexOf("missing") shouldBe -1
        t.entries.toList() shouldBe listOf(0)
        val route = t.outgoing[1].single()
        route.targets.toList() shouldBe listOf(0, -1)
        route.targetRefs.toList() shouldBe listOf(NodeRef.of("a"), NodeRef.END)
        route.closesCycle shouldBe true
        t.outgoing[0].single().closesCycle shouldBe false
    }
})
