package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.start
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlin.time.Duration.Companion.milliseconds

/** The state of the cancellation sample. */
internal object Batch : StateSchema("batch") {
    val items = key("items", default = 10)
    val processed = key("processed", default = 0)
}

/** A custom event: how far the slow node got. */
internal class Tick(val item: Int, val of: Int) {
    override fun toString(): String = "processed item $item of $of"
}

/** Cancels a run mid-way through a slow node: the node ends CANCELLED, its writes are dropped, the run ends CANCELLED. */
internal object CancellationSample : Sample {
    override val name: String = "cancellation"
    override val description: String = "cancel a run mid-way: the slow node and the run end CANCELLED, nothing leaks"

    const val CANCEL_AFTER: Int = 3

    val graph: Graph = graph("cancellation", Batch) {
        val prepare = node("prepare") { delay(50.milliseconds) }
        val process = node("process") {
            val n = get(Batch.items)
            for (i in 1..n) {
                delay(100.milliseconds) // cancellable: the run's cancellation interrupts it here
                emit(Tick(i, n))
            }
            set(Batch.processed, n)
        }
        val report = node("report") { }
        start(prepare)
        prepare then process
        process then report
    }

    override suspend fun run(
        context: SampleContext,
        onEvent: suspend (RunEvent) -> Unit,
    ): SampleOutcome = coroutineScope {
        val halfway = CompletableDeferred<Unit>()
        val handle = context.running(graph).start(this, stateOf(Batch.items to 10), context.options()) { event ->
            onEvent(event)
            if (event is RunEvent.Custom && (event.payload as? Tick)?.item == CANCEL_AFTER) halfway.complete(Unit)
        }
        halfway.await()
        handle.cancel()
        val result = handle.await()
        SampleOutcome(
            listOf(result),
            listOf(
                "cancelled after item $CANCEL_AFTER: run ${result.status}, processed=${result.state[Batch.processed]}",
            ),
            intended = setOf(Status.CANCELLED),
        )
    }
}
