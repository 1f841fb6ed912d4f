package dev.trellis.test.model

import dev.langchain4j.model.chat.request.ChatRequest
import dev.trellis.test.internal.promptOf
import kotlinx.coroutines.test.TestCoroutineScheduler
import java.util.function.Predicate

/**
 * Scripts a model. Each call is answered by the first prompt rule that matches it ([whenPrompt],
 * [whenPromptMatches], [whenRequest]), else by the next answer given to [answer], in call order; a call neither
 * answers fails with [UnscriptedCallException], naming its prompt. A rule with several answers gives them in turn,
 * its last one again once all were given.
 */
public class ScriptedModelBuilder internal constructor() {
    private val rules = ArrayList<Rule>()
    private val sequence = ArrayList<ScriptedAnswer>()
    private var scheduler: TestCoroutineScheduler? = null

    /** Answers the next calls with [answers], one per call, in order. */
    public fun answer(vararg answers: ScriptedAnswer): ScriptedModelBuilder = apply { sequence += answers }

    /** Answers the next calls with [texts], one per call, in order. */
    public fun answer(vararg texts: String): ScriptedModelBuilder =
        apply { texts.mapTo(sequence) { ScriptedAnswer.text(it) } }

    /** Answers every call whose prompt contains [text] with [answers] in turn (the last one repeating). */
    public fun whenPrompt(text: String, vararg answers: ScriptedAnswer): ScriptedModelBuilder =
        rule("prompt contains '$text'", { text in promptOf(it) }, inTurn(answers))

    /** Answers every call whose prompt contains [text] with what [responder] makes of the request. */
    public fun whenPrompt(text: String, responder: ScriptedResponder): ScriptedModelBuilder =
        rule("prompt contains '$text'", { text in promptOf(it) }, responder::answer)

    /** Answers every call whose prompt matches the regular expression [regex] (anywhere) with [answers] in turn. */
    public fun whenPromptMatches(regex: String, vararg answers: ScriptedAnswer): ScriptedModelBuilder {
        val pattern = Regex(regex)
        return rule("prompt matches /$regex/", { pattern.containsMatchIn(promptOf(it)) }, inTurn(answers))
    }

    /** Answers every request [predicate] accepts (any part of it: system message, tools...) with [responder]. */
    public fun whenRequest(predicate: Predicate<ChatRequest>, responder: ScriptedResponder): ScriptedModelBuilder =
        rule("a request predicate", predicate, responder::answer)

    /**
     * Makes answers' latency ([ScriptedAnswer.after]) virtual time of [scheduler] (`runTest`'s `testScheduler`): a
     * 30-second answer takes no real time, and a node timeout shorter than it fires. Without it, latency is slept.
     */
    public fun virtualTime(scheduler: TestCoroutineScheduler): ScriptedModelBuilder =
        apply { this.scheduler = scheduler }

    /** A scripted blocking model. */
    public fun build(): ScriptedChatModel = ScriptedChatModel(script())

    /** A scripted streaming model. */
    public fun buildStreaming(): ScriptedStreamingChatModel = ScriptedStreamingChatModel(script())

    private fun script(): Script {
        check(rules.isNotEmpty() || sequence.isNotEmpty()) {
            "The scripted model has no answers; add some with answer(...) or whenPrompt(...) before build()."
        }
        return Script(rules.toList(), sequence.toList(), scheduler)
    }

    private fun inTurn(answers: Array<out ScriptedAnswer>): Rule.Answers {
        require(answers.isNotEmpty()) { "A prompt rule needs at least one answer." }
        return InTurn(answers.toList())
    }

    private fun rule(description: String, matches: Predicate<ChatRequest>, answers: Rule.Answers) =
        apply { rules += Rule(description, matches, answers) }
}
