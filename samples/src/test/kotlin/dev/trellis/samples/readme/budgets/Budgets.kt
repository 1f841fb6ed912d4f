package dev.trellis.samples.readme.budgets

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Budget
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking

object Agent : StateSchema() {
    val question = key<String>("question")
    val drafts = key("drafts", default = 0)
}

val agent = graph("agent", Agent) {
    val draft = node("draft") {
        charge("tokens", 1200.0) // what the model call reported
        charge("usd", 0.03)
        update(Agent.drafts) { it + 1 }
    }
    start(draft)
    draft.route(draft, END) { if (it[Agent.drafts] < 10) draft else END }
}

fun main() = runBlocking {
    val budget = Budget().withMeter("usd", 0.1).withMaxNodeExecutions(50)
    val result = try {
        agent.invoke(stateOf(Agent.question to "Why?"), RunOptions(budget = budget))
    } catch (e: GraphRunException) {
        e.result // FAILED: the fourth draft went over the budget (its writes applied, nothing started after it)
    }
    val limit = result.error as LimitExceededException
    // usd over 0.1 at 0.12, by draft
    println("${limit.meter} over ${limit.value} at ${limit.total}, by ${limit.nodeId}")
    println(result.meters) // {tokens=4800.0, usd=0.12}
}
