package dev.trellis.graph.spec

import dev.trellis.graph.CachePolicy
import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.graph
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import io.kotest.property.Arb
import io.kotest.property.PropTestConfig
import io.kotest.property.arbitrary.arbitrary
import io.kotest.property.checkAll
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Random graphs built with the DSL from registered handlers export to a spec that loads back to an equal graph. */
class SpecRoundTripTest : FunSpec({
    val child = graph("part", Part) {
        start(node("answer", body = Handlers.answer))
    }
    val registry = Handlers.registry()

    fun randomGraph(random: Random): Graph = graph("g${random.nextInt(1000)}", Doc) {
        val bodies = listOf(Handlers.plan, Handlers.write, Handlers.review, Handlers.recover)
        val count = random.nextInt(1, 7)
        val refs = (0 until count).map { i ->
            val timeout = if (random.nextBoolean()) (random.nextInt(1, 100)).seconds else null
            val retry = when (random.nextInt(4)) {
                0 -> Retry.fixed(random.nextInt(1, 5), random.nextInt(0, 500).milliseconds)
                1 -> Retry.exponential(random.nextInt(1, 5), random.nextInt(1, 500).milliseconds, 1.5, 20.seconds)
                2 -> Retry.linear(random.nextInt(1, 5), 10.milliseconds, 1.seconds).withJitter(0.25)
                else -> null
            }
            val cache = if (random.nextInt(4) == 0) CachePolicy(Handlers.byTopic, 5.seconds) else null
            when (random.nextInt(6)) {
                0 -> subgraph("n$i", child, timeout, retry, "node $i") { input(Doc.topic, Part.question) }
                1 -> map("n$i", over = Doc.notes, maxConcurrency = random.nextInt(1, 4), task = Handlers.note)
                else -> node(
                    "n$i",
                    timeout,
                    retry,
                    if (random.nextBoolean()) "node $i" else null,
                    cache = cache,
                    body = bodies.random(random),
                )
            }.also { ref -> if (random.nextInt(5) == 0) ref.intercept(Handlers.passThrough) }
        }
        start(refs[0])
        for (i in 1 until count) {
            val from = refs[random.nextInt(i)]
            when (random.nextInt(3)) {
                0 -> from then refs[i]
                1 -> from.then(refs[i], Handlers.accepted)
                else -> from.firstMatch {
                    on(refs[i], Handlers.accepted)
                    if (random.nextBoolean()) otherwise(END) else otherwiseFail()
                }
            }
        }
        if (count > 1 && random.nextBoolean()) refs.last().route(refs[0], END, selector = Handlers.pick)
        if (count > 2 && random.nextBoolean()) refs[1].onFailure(refs[2], Doc.error)
        config {
            if (random.nextBoolean()) maxNodeExecutions = random.nextInt(1, 500)
            if (random.nextBoolean()) maxConcurrency = random.nextInt(1, 8)
            if (random.nextBoolean()) executionTimeout = random.nextInt(1, 100).seconds
            if (random.nextBoolean()) defaultRetry = Retry.fixed(2, 5.milliseconds)
            if (random.nextBoolean()) failFast = true
        }
    }

    fun sameGraph(loaded: Graph, original: Graph) {
        loaded.id shouldBe original.id
        loaded.schema shouldBeSameInstanceAs original.schema
        loaded.entryPoints shouldBe original.entryPoints
        loaded.nodes.map { it.id } shouldBe original.nodes.map { it.id }
        loaded.nodes.zip(original.nodes).forEach { (a, b) ->
            if (b.composite == null) a.body shouldBeSameInstanceAs b.body
            a.timeout shouldBe b.timeout
            a.retry?.toString() shouldBe b.retry?.toString()
            a.description shouldBe b.description
            a.cache?.key shouldBe b.cache?.key
            a.interceptors shouldBe b.interceptors
            a.subgraph?.let { GraphSpec.toYaml(it, registry) } shouldBe
                b.subgraph?.let { GraphSpec.toYaml(it, registry) }
            a.isMap shouldBe b.isMap
        }
        loaded.edges.map { it.toString() } shouldBe original.edges.map { it.toString() }
        loaded.edges.zip(original.edges).forEach { (a, b) ->
            when (b) {
                is Edge.Conditional -> (a as Edge.Conditional).condition shouldBeSameInstanceAs b.condition
                is Edge.Route -> (a as Edge.Route).selector shouldBeSameInstanceAs b.selector
                is Edge.FirstMatch -> (a as Edge.FirstMatch).branches.map { it.condition } shouldBe
                    b.branches.map { it.condition }
                is Edge.OnFailure -> (a as Edge.OnFailure).error shouldBe b.error
                is Edge.Plain -> Unit
            }
        }
        loaded.config.toString() shouldBe original.config.toString()
    }

    test("a random DSL graph exported to YAML loads back equal, and exports to the same text") {
        checkAll(PropTestConfig(seed = 34, iterations = 200), Arb.graph(::randomGraph)) { original ->
            val yaml = GraphSpec.toYaml(original, registry)
            val loaded = GraphSpec.load(yaml, registry)
            sameGraph(loaded, original)
            GraphSpec.toYaml(loaded, registry) shouldBe yaml
            sameGraph(GraphSpec.load(GraphSpec.toJson(original, registry), registry), original)
        }
    }

    test("a route selector picks the same targets after the round trip") {
        val original = graph("r", Doc) {
            val a = node("a", body = Handlers.plan)
            start(a)
            a.route(a, END, selector = Handlers.pick)
        }
        val loaded = GraphSpec.load(GraphSpec.toYaml(original, registry), registry)
        (loaded.edges.single() as Edge.Route).targets shouldBe listOf("a", NodeRef.END.id)
    }
})

private fun Arb.Companion.graph(make: (Random) -> Graph): Arb<Graph> = arbitrary { rs -> make(rs.random) }
