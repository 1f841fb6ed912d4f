package dev.trellis.test.model

import dev.langchain4j.model.chat.request.ChatRequest
import dev.trellis.test.internal.promptOf
import dev.trellis.test.internal.shorten
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestCoroutineScheduler
import java.time.Duration
import java.util.concurrent.CopyOnWriteArrayList
import java.util.function.Predicate
import kotlin.time.toKotlinDuration

/** A rule of a script: requests it [matches] get the answers of [responder]. */
internal class Rule(val description: String, val matches: Predicate<ChatRequest>, val responder: Rule.Answers) {
    /** The answers of a rule: the next of a list (the last repeating), or a function of the request. */
    fun interface Answers {
        fun next(request: ChatRequest): ScriptedAnswer
    }
}

/** Answers in turn, the last one again once all were given. */
internal class InTurn(private val answers: List<ScriptedAnswer>) : Rule.Answers {
    private var given = 0

    @Synchronized
    override fun next(request: ChatRequest): ScriptedAnswer = answers[minOf(given++, answers.size - 1)]
}

/** What a scripted model answers, and the requests it got. Thread-safe: a graph calls models from many threads. */
internal class Script(
    private val rules: List<Rule>,
    sequence: List<ScriptedAnswer>,
    private val scheduler: TestCoroutineScheduler?,
) {
    private val sequence = ArrayDeque(sequence)
    private val scriptedInOrder = sequence.size
    val requests: MutableList<ChatRequest> = CopyOnWriteArrayList()

    /** The answer to [request], the call number it got; fails naming the prompt when nothing answers it. */
    fun next(request: ChatRequest): Pair<Int, ScriptedAnswer> {
        val (number, answer) =
            synchronized(this) {
                requests += request
                val number = requests.size
                val rule = rules.firstOrNull { it.matches.test(request) }
                val answer = rule?.responder?.next(request) ?: sequence.removeFirstOrNull()
                number to (answer ?: throw unscripted(number, request))
            }
        wait(answer.latency)
        return number to answer
    }

    /** Waits [latency]: on the test scheduler's virtual clock when there is one, else for real. */
    private fun wait(latency: Duration) {
        if (latency.isZero) return
        val on = scheduler
        if (on == null) {
            Thread.sleep(latency.toMillis())
        } else {
            runBlocking(StandardTestDispatcher(on)) { delay(latency.toKotlinDuration()) }
        }
    }

    private fun unscripted(number: Int, request: ChatRequest): UnscriptedCallException {
        val prompt = promptOf(request)
        val rulesText = if (rules.isEmpty()) "no prompt rules" else "prompt rules ${rules.map { it.description }}"
        return UnscriptedCallException(
            number,
            prompt,
            "Call $number to the scripted model was not scripted; its prompt: \"${shorten(prompt)}\". The script " +
                "has $scriptedInOrder answer(s) in order, all given, and $rulesText, none matching. Add an answer " +
                "for it with answer(...) or whenPrompt(...), or check why the graph made this call.",
        )
    }

    @Synchronized
    fun unused(): List<ScriptedAnswer> = sequence.toList()
}
