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

    /** The sources of the input channels of [n], in channel order. */
    fun Graph.inputsOf(n: String): List<String> {
        val t = topology.indexOf(n)
        val c = topology.channels
        return (c.start[t] until c.start[t + 1]).map { topology.nodes[c.source[it]].id }
    }

    /** The feeders of the channel [from] -> [to]. */
    fun Graph.feeders(from: String, to: String): Set<String> {
        val channel = topology.channels.of(topology.indexOf(from), topology.indexOf(to))
        return nodes.map { it.id }.filter { topology.channels.feeds(topology.indexOf(it), channel) }.toSet()
    }

    test("a diamond's join has one channel per branch, each fed by its branch and what reaches it") {
        val g = topologyOf("a>b", "a>c", "b>d", "c>d")
        g.inputsOf("d") shouldBe listOf("b", "c")
        g.feeders("b", "d") shouldBe setOf("a", "b")
        g.feeders("c", "d") shouldBe setOf("a", "c")
        g.inputsOf("a") shouldBe emptyList()
        g.topology.channels.of(g.topology.indexOf("b"), g.topology.indexOf("c")) shouldBe -1
        g.backEdges shouldBe emptyList()
    }

    test("in a loop a channel's feeders stop at its target") {
        val g = topologyOf("a>b", "b>c", "c>a")
        g.feeders("c", "a") shouldBe setOf("b", "c")
        g.feeders("a", "b") shouldBe setOf("a", "c")
        g.backEdges.map { it.toString() } shouldBe listOf("c -> a")
    }

    test("the branches of a diamond inside a loop do not feed each other's join channel") {
        val g = topologyOf("s>plan", "plan>a", "plan>b", "a>merge", "b>merge", "merge>check", "check>plan")
        g.inputsOf("merge") shouldBe listOf("a", "b")
        g.feeders("a", "merge") shouldBe setOf("s", "plan", "check", "a")
        g.feeders("b", "merge") shouldBe setOf("s", "plan", "check", "b")
        g.inputsOf("plan") shouldBe listOf("s", "check")
        g.feeders("s", "plan") shouldBe setOf("s")
        g.backEdges.map { it.toString() } shouldBe listOf("check -> plan")
    }

    test("a self-loop is a channel with no feeders") {
        val g = topologyOf("a>b", "b>b", "b>c")
        g.inputsOf("b") shouldBe listOf("a", "b")
        g.feeders("b", "b") shouldBe emptySet()
        g.feeders("a", "b") shouldBe setOf("a")
        g.feeders("b", "c") shouldBe setOf("a", "b")
        g.backEdges.map { it.toString() } shouldBe listOf("b -> b")
    }

    test("feeder bit sets span several words") {
        val ids = (0 until 130).map { "n$it" }
        val g = topologyOf(*ids.zipWithNext { a, b -> "$a>$b" }.toTypedArray())
        g.topology.size shouldBe 130
        g.feeders("n128", "n129") shouldBe (0 until 129).map { "n$it" }.toSet()
        g.feeders("n64", "n65") shouldBe (0 until 65).map { "n$it" }.toSet()
        g.topology.channels.count shouldBe 129
    }

    test("of finds every channel of a wide join and of random graphs, and -1 for pairs without an edge") {
        val wide = topologyOf(*(0 until 64).flatMap { listOf("entry>b$it", "b$it>join") }.toTypedArray())
        val join = wide.topology.indexOf("join")
        for (i in 0 until 64) {
            val channel = wide.topology.channels.of(wide.topology.indexOf("b$i"), join)
            wide.topology.nodes[wide.topology.channels.source[channel]].id shouldBe "b$i"
        }
        wide.topology.channels.of(wide.topology.indexOf("entry"), join) shouldBe -1
        val random = java.util.Random(36)
        repeat(50) {
            val size = 2 + random.nextInt(40)
            val edges = (
                (1 until size).map { "n${random.nextInt(it)}>n$it" } +
                    (0 until random.nextInt(3 * size)).map { "n${random.nextInt(size)}>n${random.nextInt(size)}" }
            ).distinct()
            val g = topologyOf(*edges.toTypedArray())
            val c = g.topology.channels
            val joined = edges.map {
                g.topology.indexOf(it.substringBefore('>')) to
                    g.topology.indexOf(it.substringAfter('>'))
            }
                .toSet()
            for (from in 0 until g.topology.size) {
                for (to in 0 until g.topology.size) {
                    val channel = c.of(from, to)
                    if ((from to to) in joined) {
                        (channel in c.start[to] until c.start[to + 1]) shouldBe true
                        c.source[channel] shouldBe from
                    } else {
                        channel shouldBe -1
                    }
                }
            }
        }
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
