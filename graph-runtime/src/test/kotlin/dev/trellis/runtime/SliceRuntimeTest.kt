package dev.trellis.runtime

import dev.trellis.graph.NodeBody
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Node slices at run time (`docs/semantics.md` §12): every read and write path, caught violations, retries, events. */
class SliceRuntimeTest {
    object Doc : StateSchema("slice-doc") {
        val text = key("text", default = "hello")
        val summary = key("summary", default = "")
        val secret = key("secret", default = "s3cret")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private fun sliced(timeout: Duration? = null, retry: Retry? = null, body: NodeBody) = graph("sliced", Doc) {
        val n = node(
            "summarize",
            timeout = timeout,
            retry = retry,
            reads = setOf(Doc.text, Doc.summary),
            writes = setOf(Doc.summary, Doc.log),
            body = body,
        )
        val after = node("after") { set(Doc.log, listOf("after")) }
        start(n)
        n then after
    }

    /** Runs [body] in the sliced node (untimed, then with a timeout) and returns the violation that failed it. */
    private fun violation(body: NodeBody): List<SliceViolationException> = listOf(null, 5.seconds).map { timeout ->
        var error: SliceViolationException? = null
        runTest {
            val run = sliced(timeout, body = body).record(options = virtualTime())
            withClue("timeout $timeout") {
                run.result.status shouldBe Status.FAILED
                run.result.node("summarize").status shouldBe Status.FAILED
                run.result.node("after").status shouldBe Status.PENDING
                run.result.state[Doc.summary] shouldBe "" // none of the attempt's writes is applied
                val failed = run.all<RunEvent.NodeFailed>().single()
                failed.nodeId shouldBe "summarize"
                failed.error shouldBeSameInstanceAs run.result.error
                error = run.result.error.shouldBeInstanceOf<SliceViolationException>()
            }
        }
        error!!
    }

    @Test
    fun `a node reads and writes inside its slice`() = runTest {
        val result = sliced {
            set(Doc.summary, get(Doc.text).uppercase() + state[Doc.summary])
            update(Doc.summary) { "$it!" }
            set(Doc.log, listOf(state.toMap().keys.joinToString()))
        }.invoke(options = virtualTime())
        result.state[Doc.summary] shouldBe "HELLO!"
        result.state[Doc.log] shouldBe listOf("text, summary", "after")
    }

    @Test
    fun `get, state reads and update's read outside the read slice fail the node, naming node, key and slice`() {
        val reads = listOf<NodeBody>(
            { get(Doc.secret) },
            { state[Doc.secret] },
            { state.getOrNull(Doc.secret) },
            { state.contains(Doc.secret) },
            {
                set(Doc.summary, "x")
                get(Doc.log)
            },
        )
        for (read in reads) {
            for (e in violation(read)) {
                e.nodeId shouldBe "summarize"
                e.access shouldBe SliceViolationException.Access.READ
                e.message shouldContain "Node 'summarize' read state key '"
                e.message shouldContain "not in its declared reads [text, summary]"
            }
        }
        violation { get(Doc.secret) }.forEach { it.key shouldBe Doc.secret }
    }

    @Test
    fun `set and update's write outside the write slice fail the node`() {
        for (write in listOf<NodeBody>({ set(Doc.text, "x") }, { update(Doc.text) { "$it!" } })) {
            for (e in violation(write)) {
                e.key shouldBe Doc.text
                e.access shouldBe SliceViolationException.Access.WRITE
                e.declared shouldBe setOf(Doc.summary, Doc.log)
                e.message shouldContain
                    "Node 'summarize' wrote state key 'text', which is not in its declared writes [summary, log]. " +
                    "Add 'text' to the node's writes"
            }
        }
        // update needs the key in both halves: text is readable but not writable, and the read comes first.
        violation { update(Doc.secret) { it } }.forEach { it.access shouldBe SliceViolationException.Access.READ }
    }

    @Test
    fun `a violation the body catches still fails the node, with the violation as its error`() {
        val caught = violation {
            set(Doc.summary, "before")
            try {
                set(Doc.secret, "leak")
            } catch (_: IllegalStateException) {
                set(Doc.summary, "swallowed")
            }
        }
        caught.forEach { it.key shouldBe Doc.secret }
        // Caught, then the body failed with an error of its own: the violation is still the node's error.
        violation {
            try {
                get(Doc.secret)
            } catch (_: SliceViolationException) {
                error("something else")
            }
        }.forEach { it.key shouldBe Doc.secret }
    }

    @Test
    fun `a violation is never retried, whatever the retry policy`() = runTest {
        var attempts = 0
        val run = sliced(retry = Retry.fixed(3, 1.milliseconds)) {
            attempts++
            get(Doc.secret)
        }.record(options = virtualTime())
        run.result.error.shouldBeInstanceOf<SliceViolationException>()
        attempts shouldBe 1
        run.all<RunEvent.NodeRetrying>().size shouldBe 0
        run.result.node("summarize").attempts shouldBe 1
        val e = shouldThrow<GraphRunException> { sliced { set(Doc.text, "x") }.invoke(options = virtualTime()) }
        e.cause.shouldBeInstanceOf<SliceViolationException>()
    }

    @Test
    fun `edge conditions read outside the node's read slice`() = runTest {
        val g = graph("edges", Doc) {
            val a = node("a", reads = emptySet(), writes = setOf(Doc.summary)) {
                delay(1)
                set(Doc.summary, "done")
            }
            val b = node("b") { set(Doc.log, listOf("b")) }
            start(a)
            a.then(b) { it[Doc.secret] == "s3cret" && it[Doc.summary] == "done" }
        }
        g.invoke(stateOf(Doc.text to "t"), virtualTime()).state[Doc.log] shouldBe listOf("b")
    }

    @Test
    fun `an undeclared half is unrestricted`() = runTest {
        val g = graph("half", Doc) {
            val a = node("a", writes = setOf(Doc.summary)) { set(Doc.summary, get(Doc.secret) + state[Doc.text]) }
            start(a)
        }
        g.invoke(options = virtualTime()).state[Doc.summary] shouldBe "s3crethello"
        val keys: Set<StateKey<*>> = g.node("a").slice!!.writes!!
        keys shouldBe setOf(Doc.summary)
    }
}
