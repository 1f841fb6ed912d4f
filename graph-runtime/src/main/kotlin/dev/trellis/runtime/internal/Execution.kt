package dev.trellis.runtime.internal

import dev.trellis.graph.Node
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.Status
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Job
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import kotlin.time.toJavaDuration

/**
 * One execution of a node: its attempts, its buffered writes and its outcome. It is the [NodeScope] the
 * node's body runs with. Written by the node's coroutine while it runs, read by the run's loop after the
 * completion is handed over (the hand-over orders the two).
 */
internal class Execution(
    private val engine: Engine,
    val node: Node,
    val index: Int,
    val number: Int,
    override var state: State,
) : NodeScope {
    override val runId: String get() = engine.runId
    override val nodeId: String get() = node.id
    override val executionCount: Int get() = number
    override var attempt: Int = 1

    var status: Status = Status.EXECUTING
    var error: Throwable? = null

    /** While the execution runs, the time it started (see [Engine.nanoTime]); then how long it ran. */
    var durationNanos: Long = 0

    /**
     * The coroutine running this execution once a worker started it, or [CANCEL_REQUESTED] when a fail-fast
     * cancellation came first (then it never starts). Set once, by compare-and-set.
     */
    @Volatile
    @JvmField
    var job: Job? = null

    /** Called by the worker starting this execution in [coroutine]; false when it was cancelled before. */
    fun claim(coroutine: Job): Boolean = JOB.compareAndSet(this, null, coroutine)

    /** Cancels this execution: its coroutine when it runs, or its start when it is still queued. */
    fun cancel() {
        if (JOB.compareAndSet(this, null, CANCEL_REQUESTED)) return
        job?.cancel()
    }

    // The first write lives in two fields; arrays only hold the second and later ones.
    private var firstKey: Int = -1
    private var firstValue: Any? = null
    private var writeKeys: IntArray? = null
    private var writeValues: Array<Any?>? = null
    var writeCount: Int = 0
        private set

    fun writeKeyAt(i: Int): Int = if (i == 0) firstKey else writeKeys!![i - 1]

    fun writeValueAt(i: Int): Any? = if (i == 0) firstValue else writeValues!![i - 1]

    override fun <T> get(key: StateKey<T>): T {
        var value: Any? = state.getOrUnset(key)
        val reducer = key.reducer
        for (i in 0 until writeCount) {
            if (writeKeyAt(i) != key.index) continue
            val w = writeValueAt(i)
            @Suppress("UNCHECKED_CAST")
            value = if (reducer == null || value === State.Unset) w else reducer.reduce(value as T, w as T)
        }
        if (value === State.Unset) return state[key] // throws with the key's name
        @Suppress("UNCHECKED_CAST")
        return value as T
    }

    override fun <T> set(key: StateKey<T>, value: T) {
        require(key.schema === state.schema) {
            "Node '${node.id}' wrote key '${key.name}' of schema '${key.schema.name}', but this graph's schema is '${state.schema.name}'."
        }
        if (writeCount == 0) {
            firstKey = key.index
            firstValue = value
            writeCount = 1
            return
        }
        var keys = writeKeys
        var values = writeValues
        val slot = writeCount - 1
        if (keys == null || values == null) {
            keys = IntArray(4)
            values = arrayOfNulls(4)
            writeKeys = keys
            writeValues = values
        } else if (slot == keys.size) {
            keys = keys.copyOf(slot * 2)
            values = values.copyOf(slot * 2)
            writeKeys = keys
            writeValues = values
        }
        keys[slot] = key.index
        values[slot] = value
        writeCount++
    }

    override fun <T> update(key: StateKey<T>, transform: (T) -> T) {
        require(key.reducer == null) {
            "update() replaces a value, but state key '${key.name}' has reducer ${key.reducer}; use set(${key.name}, update) to fold an update into it."
        }
        set(key, transform(get(key)))
    }

    override suspend fun emit(payload: Any) {
        engine.emitCustom(this, payload)
    }

    /** The payload of this execution's interrupt, when [status] is INTERRUPTED. */
    var interruptPayload: String? = null

    override fun interrupt(payload: String): String = engine.takeAnswer(index) ?: throw InterruptSignal(payload)

    // The node's policies are read where needed, not kept in fields: an execution is allocated per step.
    private val retry: Retry get() = node.retry ?: engine.graph.config.defaultRetry
    private val timeout: kotlin.time.Duration? get() = node.timeout ?: engine.graph.config.defaultNodeTimeout

    /**
     * Runs the execution: one attempt in one frame in the common case, else [runAttempts], until one attempt
     * succeeds, the retry policy gives up, or the coroutine is cancelled (then [status] is CANCELLED and the
     * cancellation is rethrown).
     */
    suspend inline fun run() {
        if (timeout == null && retry.maxAttempts == 1) runOnce() else runAttempts()
    }

    private suspend fun runAttempts() {
        val retry = retry
        val timeout = timeout
        durationNanos = engine.nanoTime() // the start time until the end
        try {
            while (true) {
                val failure = attemptOnce(timeout) ?: break
                if (failure is InterruptSignal) {
                    status = Status.INTERRUPTED
                    interruptPayload = failure.payload
                    break
                }
                if (!retry.shouldRetry(failure, attempt)) {
                    status = Status.FAILED
                    error = failure
                    break
                }
                val wait = retry.delayBefore(attempt + 1, engine.options.random)
                engine.emitRetrying(this, failure, wait.toJavaDuration())
                delay(wait)
                attempt++
                state = engine.currentState
                writeCount = 0
            }
            // A body that swallowed the cancellation of its run still ends cancelled, its writes unapplied.
            currentCoroutineContext().ensureActive()
            if (status == Status.EXECUTING) status = Status.COMPLETED
        } catch (e: CancellationException) {
            status = Status.CANCELLED
            throw e
        } finally {
            durationNanos = engine.nanoTime() - durationNanos
        }
    }

    /** The common case, in one suspend frame: one attempt, no timeout. */
    suspend fun runOnce() {
        durationNanos = engine.nanoTime() // the start time until the end
        try {
            node.body(this)
            // A body that swallowed the cancellation of its run still ends cancelled, its writes unapplied.
            currentCoroutineContext().ensureActive()
            status = Status.COMPLETED
        } catch (e: Throwable) {
            status = Status.CANCELLED // when rethrown just below
            e.rethrowIfFatal(currentCoroutineContext())
            writeCount = 0
            if (e is InterruptSignal) {
                status = Status.INTERRUPTED
                interruptPayload = e.payload
            } else {
                status = Status.FAILED
                error = e
            }
        } finally {
            durationNanos = engine.nanoTime() - durationNanos
        }
    }

    /** Runs one attempt; returns its failure, or null on success. Rethrows real cancellation. */
    private suspend fun attemptOnce(timeout: kotlin.time.Duration?): Throwable? {
        val failure = try {
            if (timeout == null) {
                node.body(this)
                null
            } else {
                TimedAttempt(this).run(timeout, engine.childContext)
            }
        } catch (e: Throwable) {
            e
        } ?: return null
        failure.rethrowIfFatal(currentCoroutineContext())
        writeCount = 0
        return failure
    }

    /** Drops what the execution no longer needs once merged, so history does not retain states. */
    fun release() {
        firstValue = null
        writeKeys = null
        writeValues = null
        writeCount = 0
    }
}

private val CANCEL_REQUESTED: Job = Job().apply { cancel() }

private val JOB: AtomicReferenceFieldUpdater<Execution, Job> =
    AtomicReferenceFieldUpdater.newUpdater(Execution::class.java, Job::class.java, "job")

/** Thrown by [NodeScope.interrupt] to end the attempt; never seen by users unless their node catches it. */
internal class InterruptSignal(
    val payload: String,
) : RuntimeException("The node asked for input: $payload", null, false, false)
