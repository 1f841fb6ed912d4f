package dev.trellis.test.eval

import dev.trellis.test.internal.timelineHtml
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.runInterruptible
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import java.util.concurrent.atomic.AtomicReference
import kotlin.time.TimeSource

/**
 * Runs an [EvalSet] through an [EvalTarget] and scores every case, in parallel up to [concurrency] cases at a
 * time, within a [budget] (once the cases that ran cost that much, the cases not started yet are skipped and
 * reported so). The result is an [EvalReport]; [EvalReport.assertPassRate] turns it into a failing test.
 *
 * ```kotlin
 * val report = Evaluation(EvalSet.fromResource("evals/research.jsonl"), target)
 *     .scorers(Scorers.contains(), Scorers.trajectory())
 *     .concurrency(4)
 *     .run()
 * println(report.toTable())
 * report.assertPassRate(0.9)
 * ```
 */
public class Evaluation(private val set: EvalSet, private val target: EvalTarget) {
    private var scorers: List<Scorer> =
        listOf(Scorers.exact(), Scorers.contains(), Scorers.jsonSchema(), Scorers.trajectory(), Scorers.numeric())
    private var concurrency = 4
    private var budget = Double.POSITIVE_INFINITY
    private var timelines = true

    /** Scores with [scorers] (by default exact, contains, jsonSchema, trajectory and numeric). */
    public fun scorers(vararg scorers: Scorer): Evaluation = apply {
        require(scorers.isNotEmpty()) { "An evaluation needs at least one scorer." }
        this.scorers = scorers.toList()
    }

    /** Runs at most [cases] cases at a time (4 by default). */
    public fun concurrency(cases: Int): Evaluation = apply {
        require(cases >= 1) { "Concurrency is at least 1 case at a time; got $cases." }
        concurrency = cases
    }

    /** Skips the cases not started once the cases run cost [total] (the unit of [EvalOutput.cost]). */
    public fun budget(total: Double): Evaluation = apply {
        require(total >= 0) { "A budget cannot be negative; got $total." }
        budget = total
    }

    /** Whether the report keeps each case's timeline page (for [EvalReport.toHtml]); on by default. */
    public fun timelines(keep: Boolean): Evaluation = apply { timelines = keep }

    /** Runs the evaluation. */
    public suspend fun evaluate(): EvalReport = coroutineScope {
        val gate = Semaphore(concurrency)
        val spent = AtomicReference(0.0)
        val results = set.cases.map { case ->
            // Undispatched: each case queues for a permit at once, in the set's order (the semaphore is fair).
            async(start = CoroutineStart.UNDISPATCHED) { gate.withPermit { runCase(case, spent) } }
        }.awaitAll()
        EvalReport(set.name, results)
    }

    /** Runs the evaluation, blocking (Java, or a test outside a coroutine). */
    public fun run(): EvalReport = runBlocking(Dispatchers.Default) { evaluate() }

    private suspend fun runCase(case: EvalCase, spent: AtomicReference<Double>): CaseResult {
        if (spent.get() >= budget) {
            return CaseResult(
                case.id,
                false,
                0.0,
                emptyMap(),
                "",
                "skipped: the budget of $budget was spent",
                true,
                0.0,
                0,
                null,
            )
        }
        val mark = TimeSource.Monotonic.markNow()
        val output = try {
            target.run(case)
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            return CaseResult(
                case.id,
                false,
                0.0,
                emptyMap(),
                "",
                "failed: $e",
                false,
                0.0,
                mark.elapsedNow().inWholeMilliseconds,
                null,
            )
        }
        spent.accumulateAndGet(output.cost) { a, b -> a + b }
        val scores = LinkedHashMap<String, Score>()
        for (scorer in scorers) {
            scores[scorer.name] = try {
                runInterruptible(Dispatchers.IO) { scorer.score(case, output) }
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                Score.fail("the scorer failed: $e")
            }
        }
        val applicable = scores.values.filter { it.applicable }
        val timeline = output.graph?.takeIf { timelines && output.events.isNotEmpty() }?.let { graph ->
            val result = output.events.filterIsInstance<dev.trellis.runtime.RunEvent.Terminal>().lastOrNull()?.result
            timelineHtml(graph, result, output.events)
        }
        return CaseResult(
            case.id,
            applicable.all { it.passed },
            if (applicable.isEmpty()) 1.0 else applicable.map { it.value }.average(),
            scores,
            output.text,
            null,
            false,
            output.cost,
            mark.elapsedNow().inWholeMilliseconds,
            timeline,
        )
    }

    override fun toString(): String = "Evaluation(${set.name}, ${scorers.map { it.name }})"
}
