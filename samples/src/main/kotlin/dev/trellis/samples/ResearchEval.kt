package dev.trellis.samples

import dev.trellis.graph.stateOf
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.events
import dev.trellis.test.eval.EvalOutput
import dev.trellis.test.eval.EvalSet
import dev.trellis.test.eval.EvalTarget
import dev.trellis.test.eval.Evaluation
import dev.trellis.test.eval.Score
import dev.trellis.test.eval.Scorer
import dev.trellis.test.eval.Scorers
import kotlinx.coroutines.flow.toList

/**
 * The research sample's evaluation (`./trellis-samples eval research`): the cases of `evals/research.jsonl`, each a
 * run of the research graph on [models] (scripted by default), scored by what the report contains, the run's
 * trajectory and its number of drafts. A case's cost is its run's tokens (the cost meter), within [budget].
 */
internal object ResearchEval {
    const val RESOURCE: String = "evals/research.jsonl"

    fun set(): EvalSet = EvalSet.fromResource(RESOURCE)

    /** Runs one case: the question of `input.question`, the news search failing `input.newsFailures` times. */
    fun target(models: ResearchModels): EvalTarget = EvalTarget { case ->
        val tools = ResearchSample.Tools(newsFailures = case.input("newsFailures")?.toInt() ?: 0)
        val graph = ResearchSample.graph(tools, models)
        val question = case.input("question") ?: error("Case '${case.id}' has no input.question.")
        val budget = Budget().withMeter(CostMeter.TOKENS, ResearchSample.TOKEN_BUDGET)
        val events = graph.events(stateOf(Research.question to question), RunOptions(budget = budget)).toList()
        val result = (events.last() as RunEvent.Terminal).result
        EvalOutput(result.state[Research.published], events, graph, result.meters[CostMeter.TOKENS] ?: 0.0)
    }

    /** `expect.drafts`: how many drafts the run wrote before it published. */
    val drafts: Scorer = Scorer.of("drafts") { case, output ->
        val expected = case.expected("drafts")?.toInt() ?: return@of Score.notApplicable("no expect.drafts")
        val state = (output.events.last() as RunEvent.Terminal).result.state
        val actual = state[Research.drafts]
        if (actual == expected) Score.pass("$actual drafts") else Score.fail("$actual drafts, expected $expected")
    }

    fun evaluation(
        models: ResearchModels,
        concurrency: Int = 4,
        budget: Double = Double.POSITIVE_INFINITY,
    ): Evaluation =
        Evaluation(set(), target(models))
            .scorers(Scorers.contains(), Scorers.trajectory(), drafts)
            .concurrency(concurrency)
            .budget(budget)
}
