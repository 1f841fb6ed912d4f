package dev.trellis.test.eval

import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest

/**
 * An LLM-as-judge scorer: asks [model] to grade the output of a case against [rubric] (and the case's
 * `expect.criteria`). The model is told to answer `SCORE: <0 to 10>` on the first line, then its reasons; the
 * score divided by 10 is the case's score, passing at [passAt]. An answer without a score fails the case, quoting
 * it. Test it with a scripted model that answers `SCORE: 9`.
 */
public class LlmJudge internal constructor(
    private val model: ChatModel,
    private val rubric: String,
    private val passAt: Double,
) : Scorer {
    override val name: String = "llmJudge"

    override fun score(case: EvalCase, output: EvalOutput): Score {
        val criteria = case.expected("criteria")
        val prompt = buildString {
            append("Grade the answer to this task.\n\nTask input: ").append(case.input).append('\n')
            if (criteria != null) append("What a good answer does: ").append(criteria).append('\n')
            append("\nThe answer:\n").append(output.text)
        }
        val request = ChatRequest.builder().messages(
            SystemMessage.from(
                "You are a strict grader. Rubric: $rubric\nAnswer with 'SCORE: <an integer from 0 to 10>' on the " +
                    "first line, then one line of reasons.",
            ),
            UserMessage.from(prompt),
        ).build()
        val answer = model.chat(request).aiMessage().text().orEmpty()
        val grade = SCORE.find(answer)?.groupValues?.get(1)?.toDoubleOrNull()
            ?: return Score.fail("the judge gave no 'SCORE: n' (it answered \"${Scorers.short(answer)}\")")
        val value = (grade / 10.0).coerceIn(0.0, 1.0)
        val reason = answer.lineSequence().drop(1).joinToString(" ").trim().ifEmpty { "no reason given" }
        return Score.of(value, passAt, "judge: ${grade.toInt()}/10, $reason")
    }

    override fun toString(): String = "LlmJudge($rubric)"

    private companion object {
        val SCORE = Regex("(?i)SCORE\\s*[:=]\\s*(\\d+(?:\\.\\d+)?)")
    }
}
