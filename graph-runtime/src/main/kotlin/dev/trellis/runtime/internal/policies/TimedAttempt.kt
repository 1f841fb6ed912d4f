package dev.trellis.runtime.internal.policies

import dev.trellis.graph.Composite
import dev.trellis.graph.CompositeScope
import dev.trellis.graph.NodeScope
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.NodeTimeoutException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.internal.composition.runMap
import dev.trellis.runtime.internal.composition.runSubgraph
import dev.trellis.runtime.internal.execution.AttemptScope
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.execution.checkWrite
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration
import kotlin.time.toJavaDuration

/**
 * One attempt of [execution] under a deadline that holds whatever the body does (`docs/semantics.md` §7).
 *
 * The body runs in a coroutine of its own on the run's node dispatcher while the attempt waits for it, so a body
 * that computes without suspending, or blocks its thread, cannot hold the deadline back. When the deadline passes
 * first, the attempt fails with [NodeTimeoutException] at once: the body is cancelled (a body blocked in
 * `runInterruptible` is interrupted) and nothing waits for it. A body that ignores its cancellation runs on,
 * **abandoned**; its coroutine belongs to no run, so the run ends without it.
 *
 * The attempt is the body's [NodeScope], so that an abandoned body cannot touch the execution: its writes go to
 * the attempt's own buffer, handed to the execution only when the body finished in time; once abandoned, its
 * `emit` and `interrupt` throw a [CancellationException] (its events would come after its node's end). When the
 * attempt itself is cancelled (the run is), the body is cancelled and waited for, as an untimed body is.
 *
 * Only attempts with a timeout pay for this (a coroutine, a timer, a buffer); an untimed node runs its body in its
 * own execution, with none of it.
 */
internal class TimedAttempt(override val execution: Execution) : AttemptScope, CompositeScope {
    override suspend fun runSubgraph(spec: Composite.Subgraph) {
        execution.engine.runSubgraph(execution, this, spec)
    }

    override suspend fun runMap(spec: Composite.Map) {
        execution.engine.runMap(execution, this, spec)
    }

    override val runId: String get() = execution.runId
    override val nodeId: String get() = execution.nodeId
    override val executionCount: Int get() = execution.executionCount
    override val attempt: Int = execution.attempt
    private val snapshot: State = execution.snapshot
    override val state: State get() = execution.node.slice?.view(snapshot, nodeId) { violation = it } ?: snapshot

    /** A slice violation of the body (`docs/semantics.md` §12): the attempt's failure even when the body caught it. */
    @Volatile
    override var violation: SliceViolationException? = null
        private set

    private fun violated(e: SliceViolationException): SliceViolationException {
        violation = e
        return e
    }

    private val keys = ArrayList<StateKey<*>>(2)
    private val values = ArrayList<Any?>(2)

    /** Held while an event is sent, so that abandoning waits for a send in progress and refuses later ones. */
    private val sending = Mutex()

    /** Set once the deadline passed; written under [sending] and this object's monitor. */
    @Volatile
    private var abandoned = false

    override fun <T> get(key: StateKey<T>): T {
        execution.node.slice?.readViolation(nodeId, key)?.let { throw violated(it) }
        var value: Any? = snapshot.getOrUnset(key)
        val reducer = key.reducer
        for (i in keys.indices) {
            if (keys[i] != key) continue
            @Suppress("UNCHECKED_CAST")
            value =
                if (reducer == null || value === State.Unset) values[i] else reducer.reduce(value as T, values[i] as T)
        }
        if (value === State.Unset) return snapshot[key] // throws with the key's name
        @Suppress("UNCHECKED_CAST")
        return value as T
    }

    override fun <T> set(key: StateKey<T>, value: T) {
        require(key.schema === snapshot.schema) {
            "Node '$nodeId' wrote key '${key.name}' of schema '${key.schema.name}', but this graph's schema is '${snapshot.schema.name}'."
        }
        execution.node.slice?.writeViolation(nodeId, key)?.let { throw violated(it) }
        checkWrite(nodeId, key, value)
        keys += key
        values += value
    }

    override fun <T> update(key: StateKey<T>, transform: (T) -> T) {
        require(key.reducer == null) {
            "update() replaces a value, but state key '${key.name}' has reducer ${key.reducer}; use set(${key.name}, update) to fold an update into it."
        }
        set(key, transform(get(key)))
    }

    override fun clearWrites() {
        keys.clear()
        values.clear()
    }

    override fun copyWrites(): NodeWrites = NodeWrites.wrap(keys.toTypedArray(), values.toTypedArray())

    override suspend fun emit(payload: Any) {
        sending.withLock {
            if (abandoned) throw abandonedError()
            execution.emit(payload)
        }
    }

    override suspend fun sendNodeEvent(event: (sequence: Long) -> RunEvent) {
        sending.withLock {
            if (abandoned) throw abandonedError()
            execution.sendNodeEvent(event)
        }
    }

    override fun charge(meter: String, amount: Double) = synchronized(this) {
        if (abandoned) throw abandonedError()
        execution.charge(meter, amount)
    }

    override fun interrupt(payload: String): String = synchronized(this) {
        if (abandoned) throw abandonedError()
        execution.interrupt(payload)
    }

    private fun abandonedError() = CancellationException(
        "Node '$nodeId' (attempt $attempt) ran past its timeout and was abandoned; its writes, events, charges and " +
            "interrupts are discarded.",
    )

    /**
     * Runs the body on [dispatcher] until it finishes or [timeout] passes. Returns the body's failure, a
     * [NodeTimeoutException], or null when it finished in time (its writes are then the execution's).
     * Rethrows the cancellation of the calling coroutine.
     */
    suspend fun run(timeout: Duration, dispatcher: CoroutineContext): Throwable? {
        // A Job of its own, not a child of the execution's: the run must not wait for an abandoned body.
        val body = CoroutineScope(currentCoroutineContext() + Job() + dispatcher).async {
            // The body's failure is a value: rethrown across `await` it could be replaced by a copy (stack-trace
            // recovery), and a node's error must be its own.
            try {
                execution.invokeBody(this@TimedAttempt)
                FINISHED
            } catch (e: Throwable) {
                e
            }
        }
        val outcome = try {
            withTimeoutOrNull(timeout) { body.await() }
        } catch (e: Throwable) {
            withContext(NonCancellable) { body.cancelAndJoin() }
            throw e
        }
        if (outcome == null) {
            body.cancel()
            // A child run is cancelled and waited for, so that its events end before the node's (§11).
            if (execution.node.composite != null) withContext(NonCancellable) { body.join() }
            withContext(NonCancellable) {
                sending.withLock { synchronized(this@TimedAttempt) { abandoned = true } }
            }
            return NodeTimeoutException(nodeId, timeout.toJavaDuration())
        }
        violation?.let { return it }
        if (outcome !== FINISHED) return outcome as Throwable
        for (i in keys.indices) {
            @Suppress("UNCHECKED_CAST")
            execution.set(keys[i] as StateKey<Any?>, values[i])
        }
        return null
    }
}

/** What a body that finished without failing leaves in its [TimedAttempt]'s deferred. */
private val FINISHED = Any()
