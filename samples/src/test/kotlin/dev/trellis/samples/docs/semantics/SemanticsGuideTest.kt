package dev.trellis.samples.docs.semantics

import dev.trellis.graph.NodeError
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

/** The Kotlin examples of `docs/semantics.md` (§13.2 routing rules, §13.3 error routes), run and checked. */
class SemanticsGuideTest {
    object Doc : StateSchema("doc") {
        val drafts = key("drafts", default = 0)
        val approved = key("approved", default = false)
        val approveAt = key("approveAt", default = 2)
        val outcome = key("outcome", default = "")
    }

    private fun review(approveAt: Int) = graph("review", Doc) {
        val write = node("write") { set(Doc.drafts, get(Doc.drafts) + 1) }
        val review = node("review") { set(Doc.approved, get(Doc.drafts) >= get(Doc.approveAt)) }
        val publish = node("publish") { set(Doc.outcome, "published draft ${get(Doc.drafts)}") }
        val giveUp = node("giveUp") { set(Doc.outcome, "gave up after ${get(Doc.drafts)}") }
        start(write)
        write then review
        review.firstMatch {
            on(publish) { it[Doc.approved] }
            on(write) { it[Doc.drafts] < 3 }
            otherwise(giveUp) // or otherwise(END): the path may end here; or otherwiseFail()
        }
    }

    @Test
    fun `first match takes the first condition that holds, else the default target`(): Unit = runBlocking {
        review(approveAt = 2).invoke(stateOf(Doc.approveAt to 2)).state[Doc.outcome] shouldBe "published draft 2"
        review(approveAt = 9).invoke(stateOf(Doc.approveAt to 9)).state[Doc.outcome] shouldBe "gave up after 3"
    }

    object Research : StateSchema("research") {
        val searchError = key<NodeError?>("searchError", default = null)
        val answer = key("answer", default = "")
    }

    @Test
    fun `an error route takes a node's failure, and a default route every other node's`(): Unit = runBlocking {
        val graph = graph("research", Research) {
            val search = node("search") { error("search API is down") }
            val fallback = node("fallback") { set(Research.answer, "cached (${get(Research.searchError)?.message})") }
            val summarize = node("summarize") { error("no summary") }
            val giveUp = node("giveUp") { set(Research.answer, get(Research.answer) + ", gave up") }
            start(search)
            search then summarize
            fallback then summarize
            search.onFailure(fallback, error = Research.searchError) // a StateKey<NodeError?>
            config { defaultOnFailure(giveUp) } // every node without its own route
        }
        val result = graph.invoke()
        result.status shouldBe Status.COMPLETED
        result.state[Research.answer] shouldContain "search API is down"
        result.state[Research.answer] shouldContain "gave up"
    }
}
