package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.temporal.internal.Payloads
import dev.trellis.temporal.internal.TaskCommits
import io.temporal.client.WorkflowClient
import io.temporal.client.WorkflowFailedException
import io.temporal.client.WorkflowNotFoundException
import io.temporal.client.WorkflowStub
import io.temporal.client.WorkflowUpdateException
import io.temporal.failure.ApplicationFailure
import io.temporal.failure.CanceledFailure
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.transformWhile
import kotlinx.coroutines.future.await
import kotlinx.coroutines.reactive.publish
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.double
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.reactivestreams.Publisher
import java.util.concurrent.CompletableFuture

/**
 * A run on Temporal: wait for its result, stream its events, answer its interrupts, cancel it, or query its
 * progress. From Kotlin: [await], [events], [answer]; from Java: [resultAsync] or [awaitBlocking],
 * [eventsPublisher], [answerAsync] or [answerBlocking].
 */
public class TemporalRun internal constructor(
    /** The run's id: its workflow id. */
    public val runId: String,
    private val graph: Graph,
    private val stub: WorkflowStub,
    private val liveEvents: LiveEvents?,
    private val client: WorkflowClient,
) {
    /** Waits (blocking) for the run's result. */
    public fun awaitBlocking(): TemporalRunResult = try {
        decode(stub.getResult(String::class.java))
    } catch (e: WorkflowFailedException) {
        cancelled(e)
    }

    /** The run's result, when it ends. */
    public fun resultAsync(): CompletableFuture<TemporalRunResult> =
        stub.getResultAsync(String::class.java).handle { text, error ->
            if (error == null) decode(text) else cancelled(error.cause as? WorkflowFailedException ?: error)
        }

    /** The result of a cancelled run: the workflow closed CANCELED, its result is read by query. */
    private fun cancelled(error: Throwable): TemporalRunResult {
        if (error !is WorkflowFailedException || error.cause !is CanceledFailure) throw error
        val text = stub.query("result", String::class.java)
            ?: throw IllegalStateException("Run $runId was cancelled before its workflow recorded a result.", error)
        return decode(text)
    }

    /** Suspends until the run's result. */
    public suspend fun await(): TemporalRunResult = resultAsync().await()

    /** Cancels the run: running nodes are cancelled and the run ends CANCELLED, as a local run does. */
    public fun cancel() {
        stub.cancel()
    }

    /**
     * The run's progress, as JSON (a workflow Query): the count of events so far, the last event of each node
     * path and the pending interrupts (`{"events":7,"nodes":{"a":"NodeCompleted"},"interrupts":{}}`).
     */
    public fun progress(): String = stub.query("progress", String::class.java)

    /** The pending interrupts (a workflow Query): the id of each (its node's path) to what the node asked. */
    public fun interrupts(): Map<String, String> =
        Payloads.json.parseToJsonElement(stub.query("interrupts", String::class.java)).jsonObject
            .mapValues { it.value.jsonPrimitive.content }

    /**
     * Answers the pending interrupt [interruptId] (a workflow Update) and returns once the workflow accepted it: the
     * node that asked runs again, and its `interrupt` call returns [answer].
     *
     * @throws IllegalArgumentException when no interrupt [interruptId] is pending (the message lists those that
     *   are); the run is unchanged.
     * @throws IllegalStateException when the run is not running.
     */
    public fun answerBlocking(interruptId: String, answer: String) {
        try {
            stub.update("answer", Void::class.java, interruptId, answer)
        } catch (e: WorkflowUpdateException) {
            val cause = e.cause
            val message = (cause as? ApplicationFailure)?.originalMessage ?: cause?.message ?: e.message
            throw IllegalArgumentException(message, e)
        } catch (e: WorkflowNotFoundException) {
            throw IllegalStateException(
                "Run '$runId' is not running (it ended, or never started): it has no interrupt to answer.",
                e,
            )
        }
    }

    /** As [answerBlocking], suspending. */
    public suspend fun answer(interruptId: String, answer: String) {
        withContext(Dispatchers.IO) { answerBlocking(interruptId, answer) }
    }

    /** As [answerBlocking], as a future (completed exceptionally with the [IllegalArgumentException]). */
    public fun answerAsync(interruptId: String, answer: String): CompletableFuture<Void> =
        CompletableFuture.runAsync { answerBlocking(interruptId, answer) }

    /**
     * The run's events, live, from its first (`RunStarted`) to its terminal event, each once: the scheduler's events
     * as the workflow makes them, and each payload a node emits as its activity emits it (docs/temporal.md,
     * "Events"). Needs the [LiveEvents] the workers publish on, given to the runner.
     *
     * @throws IllegalStateException when the runner has no [LiveEvents].
     */
    public fun events(): Flow<RunEvent> {
        val live = liveEvents ?: throw IllegalStateException(
            "Run '$runId' cannot stream its events: give the runner the LiveEvents its workers publish on " +
                "(TemporalRunner(client, taskQueue, liveEvents)) and the workers TemporalOptions(liveEvents = ...).",
        )
        return flow {
            val seen = HashSet<EventKey>()
            val commits = TaskCommits(client, runId)
            val events = live.subscribe(runId, graph).transformWhile { published ->
                // An event of a workflow task that failed is not the run's: Temporal discarded that task's work.
                val task = published.task
                val committed = task == null || published.key in seen || commits.completed(task)
                val fresh = committed && seen.add(published.key)
                if (fresh) emit(published.event)
                !(fresh && published.event.isTerminal)
            }
            emitAll(events)
        }
    }

    /** As [events], as a Reactive Streams [Publisher] for Java (Reactor, RxJava, ...); each subscriber streams anew. */
    public fun eventsPublisher(): Publisher<RunEvent> {
        val events = events()
        return publish { events.collect { send(it) } }
    }

    private fun decode(text: String): TemporalRunResult {
        val obj = Payloads.json.parseToJsonElement(text).jsonObject
        val nodes = obj.getValue("nodes").jsonObject.mapValues { (_, v) ->
            val n = v.jsonObject
            TemporalNodeResult(
                Status.valueOf(n.getValue("status").jsonPrimitive.content),
                n.getValue("executions").jsonPrimitive.int,
                n.getValue("attempts").jsonPrimitive.int,
            )
        }
        val error = obj["error"]?.takeIf { it != JsonNull }?.jsonPrimitive?.content
        return TemporalRunResult(
            runId,
            Status.valueOf(obj.getValue("status").jsonPrimitive.content),
            Payloads.decodeState(graph.schema, obj.getValue("state").jsonObject),
            nodes,
            error,
            // Results of workers from before budgets were wired have no totals.
            obj["meters"]?.jsonObject.orEmpty().mapValues { it.value.jsonPrimitive.double },
        )
    }
}
