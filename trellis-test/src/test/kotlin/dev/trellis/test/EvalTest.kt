package dev.trellis.test

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.events
import dev.trellis.test.eval.EvalCase
import dev.trellis.test.eval.EvalComparison
import dev.trellis.test.eval.EvalOutput
import dev.trellis.test.eval.EvalReport
import dev.trellis.test.eval.EvalSet
import dev.trellis.test.eval.EvalTarget
import dev.trellis.test.eval.EvalThresholdException
import dev.trellis.test.eval.Evaluation
import dev.trellis.test.eval.Scorers
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

class EvalTest {
    private val set = EvalSet.parse(
        "qa",
        """
        // a comment, then cases
        {"id": "sky", "input": {"question": "Why is the sky blue?"}, "expect": {"contains": ["Rayleigh"], "nodes": ["answer", "count"]}}
        {"id": "exact", "input": {"question": "Say yes"}, "expect": {"output": "yes"}, "tags": ["short"]}
        {"id": "number", "input": {"question": "How many legs has a spider?"}, "expect": {"number": 8, "tolerance": 0}}
        {"id": "json", "input": {"question": "Classify"}, "expect": {"schema": {"type": "object", "required": ["category"], "properties": {"category": {"enum": ["billing", "tech"]}}}}}

        {"id": "wrong", "input": {"question": "Why is the sea blue?"}, "expect": {"contains": "absorbs red"}}
        """.trimIndent(),
    )

    private val model = ScriptedChatModel.builder()
        .whenPrompt("sky", ScriptedAnswer.text("Rayleigh scattering."))
        .whenPrompt("Say yes", ScriptedAnswer.text(" yes "))
        .whenPrompt("spider", ScriptedAnswer.text("A spider has 8 legs."))
        .whenPrompt("Classify", ScriptedAnswer.json("""{"category":"billing"}"""))
        .whenPrompt("sea", ScriptedAnswer.text("It reflects the sky."))
        .build()

    private val target = EvalTarget { case ->
        val graph = qaGraph(model)
        val events = graph.events(question(case.input("question")!!)).toList()
        val result = (events.last() as RunEvent.Terminal).result
        EvalOutput(result.state[Qa.answer], events, graph, cost = 10.0)
    }

    @Test
    fun `a JSONL set is read with its ids, inputs, expectations and tags, and errors name the line`() {
        set.cases.map { it.id } shouldContainExactly listOf("sky", "exact", "number", "json", "wrong")
        set.tagged("short").cases.single().expected("output") shouldBe "yes"
        shouldThrow<IllegalArgumentException> { EvalSet.parse("bad", "{\"id\": \"a\", \"input\": {}}\n{oops") }
            .message shouldStartWith "bad:2 is not valid JSON"
        shouldThrow<IllegalArgumentException> { EvalSet.parse("bad", "{\"input\": {}}") }.message shouldContain
            "bad:1 has no \"id\""
    }

    @Test
    fun `every scorer judges its own expectation, and the report says which cases failed`() {
        val report = Evaluation(set, target).scorers(
            Scorers.exact(),
            Scorers.contains(),
            Scorers.numeric(),
            Scorers.jsonSchema(),
            Scorers.trajectory(),
        ).run()
        report.cases.map { it.id to it.passed } shouldContainExactly
            listOf("sky" to true, "exact" to true, "number" to true, "json" to true, "wrong" to false)
        report.passRate shouldBe (0.8 plusOrMinus 1e-9)
        report.case("wrong").scores.getValue("contains").reason shouldContain "missing [absorbs red]"
        report.case("sky").scores.getValue("exact").applicable shouldBe false

        val table = report.toTable()
        table shouldContain "case    result  score  exact  contains  numeric  jsonSchema  trajectory  cost  why"
        table shouldContain "wrong   FAIL"
        table shouldContain "qa: 4/5 passed (80%)"
        report.toHtml() shouldContain "<iframe srcdoc="
        val json = report.toJson()
        json shouldContain "\"passRate\": 0.8"
        EvalReport.fromJson(json).case("wrong").passed shouldBe false

        report.assertPassRate(0.8)
        shouldThrow<EvalThresholdException> { report.assertPassRate(0.9) }.message shouldContain
            "Eval 'qa' passed 80% of 5 cases, below the threshold of 90%. Failed cases:\n  wrong: contains: missing"
    }

    @Test
    fun `a JSON schema violation and a wrong trajectory fail their cases`() {
        val broken = ScriptedChatModel.builder().whenPrompt("", ScriptedAnswer.json("""{"category":"sales"}""")).build()
        val report = Evaluation(EvalSet("s", set.cases.filter { it.id == "json" || it.id == "sky" })) { case ->
            val graph = qaGraph(broken)
            val events = graph.events(question(case.input("question")!!)).toList()
            EvalOutput((events.last() as RunEvent.Terminal).result.state[Qa.answer], events.take(3), graph)
        }.scorers(Scorers.jsonSchema(), Scorers.trajectory()).run()
        report.case("json").scores.getValue("jsonSchema").reason shouldContain "1 schema error(s)"
        report.case("sky").scores.getValue("trajectory").reason shouldContain "nodes expected [answer, count] (inOrder)"
    }

    @Test
    fun `an LLM judge grades through any chat model, here a scripted one`() {
        val judge = ScriptedChatModel.builder()
            .whenPrompt("Rayleigh", ScriptedAnswer.text("SCORE: 9\nexplains the scattering"))
            .whenPrompt("reflects", ScriptedAnswer.text("SCORE: 3\nwrong physics"))
            .whenPrompt("", ScriptedAnswer.text("I cannot grade this"))
            .build()
        val cases = EvalSet("judged", set.cases.filter { it.id in setOf("sky", "wrong", "exact") })
        val report = Evaluation(cases, target).scorers(Scorers.llmJudge(judge, "Physically correct and brief.")).run()
        report.case("sky").scores.getValue("llmJudge").value shouldBe (0.9 plusOrMinus 1e-9)
        report.case("sky").passed shouldBe true
        report.case("wrong").scores.getValue("llmJudge").reason shouldBe "judge: 3/10, wrong physics"
        report.case("exact").scores.getValue("llmJudge").reason shouldContain "the judge gave no 'SCORE: n'"
        judge.requests.first().messages().first().toString() shouldContain "Physically correct and brief."
    }

    @Test
    fun `cases run in parallel up to the concurrency limit, and stop starting once the budget is spent`() {
        val running = AtomicInteger()
        val peak = AtomicInteger()
        val many = EvalSet("many", (1..12).map { EvalCase("c$it", JsonObject(mapOf("n" to JsonPrimitive(it)))) })
        val slow = EvalTarget {
            peak.accumulateAndGet(running.incrementAndGet(), ::maxOf)
            delay(20.milliseconds)
            running.decrementAndGet()
            EvalOutput("ok", cost = 1.0)
        }
        Evaluation(many, slow).concurrency(3).run().passRate shouldBe 1.0
        (peak.get() in 1..3) shouldBe true

        val budgeted = Evaluation(many, slow).concurrency(1).budget(5.0).run()
        budgeted.cases.count { !it.skipped } shouldBe 5
        budgeted.cases.last().error shouldBe "skipped: the budget of 5.0 was spent"
        budgeted.toTable() shouldContain "c12   SKIP"
    }

    @Test
    fun `a target that throws fails its case only`() {
        val report = Evaluation(
            set,
            EvalTarget { case ->
                if (case.id ==
                    "sky"
                ) {
                    error("boom")
                } else {
                    EvalOutput("yes")
                }
            },
        ).run()
        report.case("sky").error shouldBe "failed: java.lang.IllegalStateException: boom"
        report.case("exact").passed shouldBe true
    }

    @Test
    fun `comparing two reports lists regressions first`() {
        val before = Evaluation(set, target).scorers(Scorers.contains(), Scorers.exact()).run()
        val worse = EvalTarget { case -> if (case.id == "sky") EvalOutput("no idea") else target.run(case) }
        val after = Evaluation(set, worse).scorers(Scorers.contains(), Scorers.exact()).run()
        val better = Evaluation(
            set,
            EvalTarget { EvalOutput("It absorbs red light.") },
        ).scorers(Scorers.contains()).run()

        val comparison = EvalComparison.of(before, after)
        comparison.regressions.map { it.id } shouldContainExactly listOf("sky")
        comparison.changes.first().kind shouldBe "regressed"
        comparison.toTable() shouldContain "regressed sky"
        shouldThrow<EvalThresholdException> { comparison.assertNoRegressions() }.message shouldContain "regressed:"
        EvalComparison.of(EvalReport.fromJson(before.toJson()), better).improvements.map { it.id } shouldContainExactly
            listOf("wrong")
    }
}
