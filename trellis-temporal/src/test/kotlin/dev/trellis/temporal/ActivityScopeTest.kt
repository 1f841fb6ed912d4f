package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Status
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import kotlin.time.Duration.Companion.milliseconds

/**
 * A node's body reads and writes on the activity worker exactly as in the local runtime (docs/temporal.md, "Node
 * scope"): slices enforced, writes type-checked, the same errors, attempts and error routes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ActivityScopeTest {
    object S : StateSchema("scope") {
        val text = key("text", default = "hello")
        val n = key("n", default = 0)
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val error = key<NodeError?>("error", default = null)
    }

    object Other : StateSchema("scope-other") {
        val x = key("x", default = 0)
    }

    private fun single(
        id: String,
        reads: Set<StateKey<*>>? = null,
        writes: Set<StateKey<*>>? = null,
        body: NodeBody,
    ): Graph = graph(id, S) {
        val a = node("a", retry = Retry.fixed(3, 10.milliseconds), reads = reads, writes = writes, body = body)
        start(a)
    }

    @Suppress("UNCHECKED_CAST")
    private val graphs: List<Graph> = listOf(
        single("read-outside", reads = setOf(S.n)) { set(S.n, get(S.text).length) },
        single("read-state-outside", reads = setOf(S.n)) { set(S.n, state[S.text].length) },
        single("read-caught", reads = setOf(S.n), writes = setOf(S.n)) {
            try {
                get(S.text)
            } catch (e: SliceViolationException) {
                set(S.n, -1)
            }
        },
        single("write-outside", writes = setOf(S.n)) { set(S.text, "changed") },
        single("write-caught", writes = setOf(S.n)) {
            try {
                set(S.text, "changed")
            } catch (e: SliceViolationException) {
                set(S.n, -1)
            }
        },
        single("wrong-type") { set(S.n as StateKey<Any?>, "seven") },
        single("null-write") { set(S.text as StateKey<Any?>, null) },
        single("other-schema") { set(Other.x, 1) },
        single("update-reducer") { update(S.log) { it + "x" } },
        single("negative-charge") { charge("tokens", -1.0) },
        single("blank-meter") { charge(" ", 1.0) },
        single("refusal-caught") {
            try {
                set(S.n as StateKey<Any?>, "seven")
            } catch (e: IllegalArgumentException) {
                set(S.log, listOf("refused"))
            }
        },
        single("own-writes", reads = setOf(S.n, S.log), writes = setOf(S.n, S.log)) {
            set(S.n, get(S.n) + 1)
            set(S.n, get(S.n) + 1)
            set(S.log, listOf("a"))
            set(S.log, listOf("b"))
            set(S.log, listOf("seen ${get(S.log)}"))
        },
        graph("too-large", S) {
            val a = node("a") { set(S.text, "x".repeat(300_000)) }
            start(a)
        },
        graph("routed-violation", S) {
            val a = node("a", reads = setOf(S.n)) { set(S.n, get(S.text).length) }
            val fallback = node("fallback") { set(S.log, listOf("fallback")) }
            start(a)
            a.onFailure(fallback, error = S.error)
        },
    )

    private lateinit var temporal: TemporalHarness

    @BeforeAll
    fun setUp() {
        temporal = TemporalHarness(graphs)
    }

    @AfterAll
    fun tearDown() {
        temporal.close()
    }

    private fun sameAsLocally(id: String): TemporalRunResult {
        val graph = graphs.single { it.id == id }
        val expected = TemporalHarness.local(graph)
        val actual = temporal.runner.start(graph, runId = "scope-$id").awaitBlocking()
        withClue(id) {
            actual.status shouldBe expected.status
            actual.error shouldBe expected.error?.message
            actual.nodes.mapValues { Triple(it.value.status, it.value.executions, it.value.attempts) } shouldBe
                expected.nodes.mapValues { Triple(it.value.status, it.value.executions, it.value.attempts) }
            actual.state.toMap() shouldBe expected.state.toMap()
        }
        return actual
    }

    @Test
    fun `a read outside the slice fails the node with the runtime's violation, never retried`() {
        val result = sameAsLocally("read-outside")
        result.status shouldBe Status.FAILED
        result.node("a").attempts shouldBe 1
        result.error!! shouldContain "Node 'a' read state key 'text', which is not in its declared reads [n]"
    }

    @Test
    fun `a read of the state view outside the slice fails as locally`() {
        sameAsLocally("read-state-outside").error!! shouldContain "read state key 'text'"
    }

    @Test
    fun `a violation the body catches still fails the node`() {
        sameAsLocally("read-caught").status shouldBe Status.FAILED
        sameAsLocally("write-caught").status shouldBe Status.FAILED
    }

    @Test
    fun `a write outside the slice fails as locally`() {
        sameAsLocally("write-outside").error!! shouldContain
            "wrote state key 'text', which is not in its declared writes [n]"
    }

    @Test
    fun `writes of the wrong type, of null and of another schema's key are refused as locally`() {
        sameAsLocally("wrong-type").error!! shouldContain
            "wrote a value of type java.lang.String to state key 'n'"
        sameAsLocally("null-write").error!! shouldContain "(or declare the key nullable)"
        sameAsLocally("other-schema").error!! shouldContain "of schema 'scope-other'"
    }

    @Test
    fun `update of a key with a reducer and bad charges are refused as locally`() {
        sameAsLocally("update-reducer").error!! shouldContain "update() replaces a value"
        sameAsLocally("negative-charge").error!! shouldContain "charged -1.0 to meter 'tokens'"
        sameAsLocally("blank-meter").error!! shouldContain "a meter with a blank name"
    }

    @Test
    fun `a refused write the body catches is not a failure, as locally`() {
        sameAsLocally("refusal-caught").state[S.log] shouldBe listOf("refused")
    }

    @Test
    fun `a node reads its own writes, folded by the reducer, as locally`() {
        val result = sameAsLocally("own-writes")
        result.state[S.n] shouldBe 2
        result.state[S.log] shouldBe listOf("a", "b", "seen [a, b]")
    }

    @Test
    fun `an error route records the violation's own class, as locally`() {
        val result = sameAsLocally("routed-violation")
        result.state[S.error]!!.type shouldBe SliceViolationException::class.java.name
        result.state[S.log] shouldBe listOf("fallback")
    }

    @Test
    fun `a value above the payload bound fails the node, naming the key`() {
        val graph = graphs.single { it.id == "too-large" }
        val result = temporal.runner.start(graph, runId = "scope-too-large").awaitBlocking()
        result.status shouldBe Status.FAILED
        result.error!! shouldContain "Node 'a' wrote 300002 bytes to state key 'text', over the bound of 262144 bytes"
        result.error!! shouldContain "TemporalOptions.maxValueBytes"
    }
}
