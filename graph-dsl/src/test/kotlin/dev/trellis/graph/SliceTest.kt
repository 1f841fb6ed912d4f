package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

private object SliceDoc : StateSchema("doc") {
    val text = key("text", default = "")
    val summary = key("summary", default = "")
    val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
}

private object SliceOther : StateSchema("other") {
    val x = key("x", default = 0)
}

/** Node slices at build time (`docs/semantics.md` §12): declaration, views, parallel writers, Mermaid. */
class SliceTest : FunSpec({
    test("a node without reads or writes has no slice; each half is independent") {
        val g = graph("g", SliceDoc) {
            val a = node("a") { }
            val b = node("b", reads = setOf(SliceDoc.text)) { }
            val c = node("c", writes = emptySet()) { }
            start(a)
            a then b
            b then c
        }
        g.node("a").slice shouldBe null
        g.node("b").slice shouldBe NodeSlice(setOf(SliceDoc.text), null)
        g.node("b").slice!!.allowsWrite(SliceDoc.summary) shouldBe true
        g.node("b").slice!!.allowsRead(SliceDoc.summary) shouldBe false
        g.node("c").slice!!.allowsWrite(SliceDoc.text) shouldBe false
    }

    test("a slice naming a key of another schema fails the build with the fix") {
        val e = shouldThrow<GraphValidationException> {
            graph("g", SliceDoc) { start(node("a", reads = setOf(SliceOther.x)) { }) }
        }
        e.problems.single() shouldContain "Node 'a' declares key 'x' of schema 'other' in its reads"
    }

    test("a read view hides the keys outside the slice from every read path") {
        val state = stateOf(SliceDoc.text to "t", SliceDoc.summary to "s")
        val slice = NodeSlice(setOf(SliceDoc.text), null)
        val seen = ArrayList<SliceViolationException>()
        val view = slice.view(state, "n") { seen += it }
        view[SliceDoc.text] shouldBe "t"
        view.toMap() shouldBe mapOf("text" to "t", "notes" to emptyList<String>()).filterKeys { it == "text" }
        for (read in listOf<
            (
                State,
            ) -> Any?,
        >({
            it[SliceDoc.summary]
        }, {
            it.getOrNull(
                SliceDoc.summary,
            )
        }, { it.contains(SliceDoc.summary) }, { it.versionOf(SliceDoc.summary) })) {
            val e = shouldThrow<SliceViolationException> { read(view) }
            e.nodeId shouldBe "n"
            e.key shouldBe SliceDoc.summary
            e.access shouldBe SliceViolationException.Access.READ
            e.message shouldContain "Node 'n' read state key 'summary', which is not in its declared reads [text]"
            e.message shouldContain "Add 'summary' to the node's reads"
        }
        seen shouldHaveSize 4
        // The state itself is not changed, and a view of an undeclared read half is the state itself.
        state[SliceDoc.summary] shouldBe "s"
        NodeSlice(null, setOf(SliceDoc.text)).view(state, "n") { } shouldBe state
    }

    test("two entry points that both write a key without a reducer fail the build, naming both and the fix") {
        val e = shouldThrow<GraphValidationException> {
            graph("g", SliceDoc) {
                val a = node("a", writes = setOf(SliceDoc.summary)) { }
                val b = node("b", writes = setOf(SliceDoc.summary, SliceDoc.notes)) { }
                start(a, b)
            }
        }
        e.problems.single() shouldContain
            "Nodes 'a' and 'b' can run in parallel (they start together) and both declare writes to state key 'summary'"
        e.problems.single() shouldContain "Give 'summary' a reducer"
    }

    test("a plain fan-out to two writers fails the build; a key with a reducer does not") {
        shouldThrow<GraphValidationException> {
            graph("g", SliceDoc) {
                val f = node("f") { }
                val a = node("a", writes = setOf(SliceDoc.text)) { }
                val b = node("b", writes = setOf(SliceDoc.text)) { }
                start(f)
                f then a
                f then b
            }
        }.problems shouldHaveSize 1
        val ok = graph("g", SliceDoc) {
            val f = node("f") { }
            val a = node("a", writes = setOf(SliceDoc.notes)) { }
            val b = node("b", writes = setOf(SliceDoc.notes)) { }
            start(f)
            f then a
            f then b
        }
        ok.validate().isClean shouldBe true
        ok.validate().nodesWithoutWrites shouldBe listOf("f")
    }

    test("maxConcurrency = 1 runs nothing in parallel, so nothing is reported") {
        val g = graph("g", SliceDoc) {
            val a = node("a", writes = setOf(SliceDoc.text)) { }
            val b = node("b", writes = setOf(SliceDoc.text)) { }
            start(a, b)
            config { maxConcurrency = 1 }
        }
        g.validate().parallelWrites.shouldBeEmpty()
    }

    test("conditional fan-outs are reported by validate() but do not fail the build") {
        val g = graph("g", SliceDoc) {
            val f = node("f") { }
            val a = node("a", writes = setOf(SliceDoc.text)) { }
            val b = node("b", writes = setOf(SliceDoc.text)) { }
            start(f)
            f.then(a) { it[SliceDoc.summary].isEmpty() }
            f.then(b) { it[SliceDoc.summary].isNotEmpty() }
        }
        val report = g.validate()
        report.parallelWrites.single().let {
            it.first shouldBe "a"
            it.second shouldBe "b"
            it.key shouldBe SliceDoc.text
            it.definite shouldBe false
        }
        report.isClean shouldBe false
    }

    test("the targets of one route, a chain, and a diamond's branch and join are not parallel") {
        val g = graph("g", SliceDoc) {
            val f = node("f", writes = setOf(SliceDoc.text)) { }
            val a = node("a", writes = setOf(SliceDoc.text)) { }
            val b = node("b", writes = setOf(SliceDoc.text)) { }
            val c = node("c", writes = setOf(SliceDoc.summary)) { }
            val d = node("d", writes = setOf(SliceDoc.notes)) { }
            val j = node("j", writes = setOf(SliceDoc.text, SliceDoc.summary)) { }
            start(f)
            f.route(a, b) { a }
            a then c
            a then d
            b then c
            c then j
            d then j
        }
        // a and b: one route picks one; f -> a -> ... -> j: a chain; c and j: j waits for c.
        g.validate().parallelWrites.shouldBeEmpty()
    }

    test("in a loop, a node and the side branch of its previous iteration are parallel") {
        // plan -> notify, plan -> act, act -> plan: notify of one iteration runs beside the next plan.
        val g = graph("g", SliceDoc) {
            val plan = node("plan", writes = setOf(SliceDoc.text)) { }
            val notify = node("notify", writes = setOf(SliceDoc.text)) { }
            val act = node("act", writes = setOf(SliceDoc.text)) { }
            start(plan)
            plan then notify
            plan.then(act) { it[SliceDoc.summary].length < 3 }
            act then plan
        }
        val pairs = g.validate().parallelWrites.map { it.first to it.second }
        pairs shouldContain ("plan" to "notify")
        pairs shouldContain ("notify" to "act")
        pairs shouldHaveSize 2
    }

    test("toMermaid(showSlices = true) lists each node's reads and writes; the default output is unchanged") {
        val g = graph("g", SliceDoc) {
            val a = node("a", reads = setOf(SliceDoc.text), writes = setOf(SliceDoc.summary, SliceDoc.notes)) { }
            val b = node("b", writes = emptySet()) { }
            start(a)
            a then b
        }
        val sliced = g.toMermaid(showSlices = true)
        sliced shouldContain "n0[\"a<br/>reads: text<br/>writes: summary, notes\"]"
        sliced shouldContain "n1[\"b<br/>reads: *<br/>writes: none\"]"
        g.toMermaid() shouldContain "n0[\"a\"]"
        g.toMermaid() shouldBe g.toMermaid(showSlices = false)
    }
})
