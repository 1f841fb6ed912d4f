package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.delay
import kotlin.time.Duration.Companion.milliseconds

/** The state of the fan-out sample: parallel writers fold into keys with reducers, so no update is lost. */
internal object WordCount : StateSchema("wordcount") {
    val text = key<String>("text")
    val total = key("total", default = 0, reducer = Reducer.sum())
    val counts = key("counts", default = emptyMap<String, Int>(), reducer = Reducer.merge())
    val report = key("report", default = "")
}

/** Fan-out with a reducer: five counters run in parallel, a join reads their folded results. */
internal object FanoutSample : Sample {
    override val name: String = "fanout"
    override val description: String =
        "fan-out with reducers: 5 parallel counters, Reducer.sum and Reducer.merge, one join"

    const val TEXT: String = "the quick brown fox jumps over the lazy dog the end"
    val letters: List<String> = listOf("t", "e", "o", "h", "u")

    val graph: Graph = graph("fanout", WordCount) {
        val split = node("split") { }
        val counters = letters.mapIndexed { i, letter ->
            node("count-$letter") {
                delay((50L + 40L * (letters.size - i)).milliseconds) // finish in reverse order
                val n = get(WordCount.text).count { it.toString() == letter }
                set(WordCount.total, n)
                set(WordCount.counts, mapOf(letter to n))
            }
        }
        val join = node("join") {
            set(WordCount.report, get(WordCount.counts).toSortedMap().entries.joinToString { "${it.key}=${it.value}" })
        }
        start(split)
        for (counter in counters) {
            split.then(counter) { it[WordCount.text].isNotEmpty() }
            counter then join
        }
    }

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val result = runAndCollect(graph, stateOf(WordCount.text to TEXT), context, onEvent = onEvent)
        return SampleOutcome(
            listOf(result),
            listOf(
                "letters counted in parallel: ${result.state[WordCount.report]}, total ${result.state[WordCount.total]}",
            ),
        )
    }
}
