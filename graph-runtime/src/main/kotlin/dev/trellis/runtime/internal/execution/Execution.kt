package dev.trellis.runtime.internal.execution

import dev.trellis.graph.Composite
import dev.trellis.graph.CompositeScope
import dev.trellis.graph.Node
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeScope
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.Retry
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.composition.runMap
import dev.trellis.runtime.internal.composition.runSubgraph
import dev.trellis.runtime.internal.events.emitCustom
import dev.trellis.runtime.internal.policies.Charges
import dev.trellis.runtime.internal.policies.Compensable
import dev.trellis.runtime.internal.policies.chargeAmount
import dev.trellis.runtime.internal.policies.runAttempts
import dev.trellis.runtime.internal.rethrowIfCancelled
import dev.trellis.runtime.internal.scheduling.Engine
import kotlinx.coroutines.Job
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater

/**
 * One execution of a node: its attempts, its buffered writes and its outcome. It is the [NodeScope] the
 * node's body runs with. Written by the node's coroutine while it runs, read by the run's loop after the
 * completion is handed over (the hand-over orders the two).
 */
internal open class Execution(
    val engine: Engine,
    val index: Int,
    val number: Int,
    /** The state at the start of the current attempt; the body sees it through its node's read slice, [state]. */
    var snapshot: State,
) : AttemptScope, CompositeScope {
    // An execution is allocated per step: what can be read elsewhere is not a field (the node is the topology's, the
    // task index is a map task's own, an error is rare).

    /** The node this is an execution of. */
    val node: Node get() = engine.topology.nodes[index]

    /** The map task this execution is, or -1 for a node's own execution. */
    open val task: Int get() = -1

    /**
     * Where the execution is (`docs/semantics.md` §11): the node's path, or a map task's (`summarize[3]`). Made when
     * asked for (events, interrupts), not per execution: a run without events never needs it.
     */
    open val path: String get() = engine.pathOf(index)

    override val runId: String get() = engine.runId
    override val nodeId: String get() = node.id
    override val executionCount: Int get() = number
    override var attempt: Int = 1

    var status: Status = Status.EXECUTING

    /** Why the execution failed, or a slice violation during an attempt; kept with the rare fields. */
    var error: Throwable?
        get() = extras?.error
        set(value) {
            if (value != null || extras != null) extras().error = value
        }

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

    override val state: State get() = node.slice?.view(snapshot, node.id) { error = it } ?: snapshot

    /**
     * Records a slice violation (`docs/semantics.md` §12) in [error] before it is thrown: the execution fails with it
     * even when the body catches it.
     */
    private fun violated(violation: SliceViolationException): SliceViolationException {
        error = violation
        return violation
    }

    /**
     * This node's interceptors in this run, outermost first, or null for none; for a map task, those of them that
     * wrap map tasks (`NodeInterceptor.wrapsMapTasks`).
     */
    val interceptors: Array<NodeInterceptor>?
        get() = if (task >= 0) engine.taskInterceptors?.get(index) else engine.interceptors?.get(index)

    override fun clearWrites() {
        writeCount = 0
    }

    override fun copyWrites(): NodeWrites {
        val keys = engine.topology.keys
        return NodeWrites.wrap(Array(writeCount) { keys[writeKeyAt(it)] }, Array(writeCount) { writeValueAt(it) })
    }

    override fun <T> get(key: StateKey<T>): T {
        node.slice?.readViolation(node.id, key)?.let { throw violated(it) }
        var value: Any? = snapshot.getOrUnset(key)
        val reducer = key.reducer
        for (i in 0 until writeCount) {
            if (writeKeyAt(i) != key.index) continue
            val w = writeValueAt(i)
            @Suppress("UNCHECKED_CAST")
            value = if (reducer == null || value === State.Unset) w else reducer.reduce(value as T, w as T)
        }
        if (value === State.Unset) return snapshot[key] // throws with the key's name
        @Suppress("UNCHECKED_CAST")
        return value as T
    }

    override fun <T> set(key: StateKey<T>, value: T) {
        require(key.schema === snapshot.schema) {
            "Node '${node.id}' wrote key '${key.name}' of schema '${key.schema.name}', but this graph's schema is '${snapshot.schema.name}'."
        }
        node.slice?.writeViolation(node.id, key)?.let { throw violated(it) }
        // Java callers (raw types, unchecked casts) and Kotlin casts can pass any value: check it as inputs are
        // checked, so that a wrong-typed value or a null in a non-null key fails here and never reaches the state.
        checkWrite(node.id, key, value)
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

    override val execution: Execution get() = this

    override val violation: Throwable? get() = error // during an attempt, only a slice violation sets it

    override suspend fun sendNodeEvent(event: (sequence: Long) -> RunEvent) {
        engine.outbox.nodeSend(event)
    }

    /**
     * What this execution charged (`docs/semantics.md` §13.4): every attempt's, and its child runs' and map tasks';
     * null until the first charge. Written under this execution's lock (map tasks charge their map concurrently).
     */
    val charges: Charges? get() = extras?.charges

    override fun charge(meter: String, amount: Double) {
        val exact = chargeAmount(node.id, meter, amount)
        synchronized(this) { (charges ?: Charges().also { extras().charges = it }).add(meter, exact) }
    }

    /** Adds the exact [amounts] (a child run's totals, a map task's charges) to this execution's charges. */
    fun chargeAll(amounts: Map<String, java.math.BigDecimal>) {
        if (amounts.isEmpty()) return
        synchronized(this) {
            val into = charges ?: Charges().also { extras().charges = it }
            for ((meter, amount) in amounts) into.add(meter, amount)
        }
    }

    /** The payload of this execution's interrupt, when [status] is INTERRUPTED. */
    var interruptPayload: String?
        get() = extras?.interruptPayload
        set(value) {
            extras().interruptPayload = value
        }

    override fun interrupt(payload: String): String = engine.answers.take(path) ?: throw InterruptSignal(payload)

    /** The map node's own execution when this is one of its tasks, else null. */
    open val owner: Execution? get() = null

    /** The compensable executions of this execution's child runs, by map task (-1 for a subgraph's), or null. */
    var childCompensable: java.util.TreeMap<Int, MutableList<Compensable>>?
        get() = extras?.childCompensable
        set(value) {
            extras().childCompensable = value
        }

    /** The interrupts of a child run or of map tasks that ended this execution INTERRUPTED, with their paths. */
    var nestedInterrupts: List<dev.trellis.runtime.Interrupt>?
        get() = extras?.nestedInterrupts
        set(value) {
            extras().nestedInterrupts = value
        }

    /** What few executions have (an error, charges, an interrupt, child runs), made by the first that needs it. */
    private var extras: ExecutionExtras? = null

    // Made under the execution's lock: a map node's tasks charge it from their own threads while it may fail.
    private fun extras(): ExecutionExtras = extras ?: synchronized(this) {
        extras ?: ExecutionExtras().also { extras = it }
    }

    override suspend fun runSubgraph(spec: Composite.Subgraph) {
        engine.runSubgraph(this, this, spec)
    }

    override suspend fun runMap(spec: Composite.Map) {
        engine.runMap(this, this, spec)
    }

    /**
     * Runs this execution's body (the node's, or a map task's) with [scope] as its receiver, through the node's
     * interceptors (`docs/semantics.md` §13.1) — a map task's body through those that wrap map tasks only.
     */
    open suspend fun invokeBody(scope: AttemptScope) {
        val interceptors = interceptors
        val composite = node.composite
        if (composite == null || interceptors != null) return runIntercepted(scope, node, node.body, interceptors)
        // A subgraph or map node's body only hands its spec to the scope: without interceptors, the runtime does so
        // itself, without the body's coroutine frame.
        when (composite) {
            is Composite.Subgraph -> (scope as CompositeScope).runSubgraph(composite)
            is Composite.Map -> (scope as CompositeScope).runMap(composite)
        }
    }

    // The node's policies are read where needed, not kept in fields: an execution is allocated per step.

    /** The retry policy of this execution: its node's, else the graph's default (`policies/Retry.kt`). */
    val retry: Retry get() = node.retry ?: engine.graph.config.defaultRetry

    /** The timeout of each attempt, or null for none; none for a map node's own execution. */
    val timeout: kotlin.time.Duration? get() = if (isMapNode) {
        null
    } else {
        node.timeout
            ?: engine.graph.config.defaultNodeTimeout
    }

    /** A map node's own execution: its retry and timeout apply to each task instead (`docs/semantics.md` §11). */
    val isMapNode: Boolean get() = task < 0 && node.composite is Composite.Map

    /** The retry policy of a map task, or of this execution. */
    val taskRetry: Retry get() = retry

    /**
     * Runs the execution: one attempt in one frame in the common case, else [runAttempts] (`policies/Retry.kt`),
     * until one attempt succeeds, the retry policy gives up, or the coroutine is cancelled (then [status] is
     * CANCELLED and the cancellation is rethrown).
     *
     * Its duration counts from the reading of [Engine.nanoTime] the caller put in [durationNanos] (the start time until
     * the end): usually now, but the driver passes the end of the execution it completed just before
     * (`scheduling/Drive.kt`) and a worker its own start reading (`Workers.kt`). A field, not a parameter: this function
     * and [runOnce] are inlined into suspend functions, where a parameter would be a local kept across the body's
     * suspension, a field more in the caller's frame object — per run, per branch, per map task.
     */
    suspend inline fun run() {
        if (timeout == null && (isMapNode || retry.maxAttempts == 1)) runOnce() else runAttempts()
    }

    /** [run] from now. */
    suspend inline fun runNow() {
        durationNanos = engine.nanoTime()
        run()
    }

    /**
     * The common case: one attempt, no timeout; inline, so that it takes no suspend frame of its own (its caller's
     * frame is made once per run, not per step). It starts at the reading in [durationNanos] ([run]).
     */
    suspend inline fun runOnce() {
        try {
            // A plain node's body directly; a composite node's spec is run by [invokeBody] without the body's frame.
            if (engine.interceptors == null && task < 0 && node.composite == null) node.body(this) else invokeBody(this)
            error?.let { throw it } // a slice violation the body caught
            // A body that swallowed the cancellation of its run still ends cancelled, its writes unapplied.
            currentCoroutineContext().ensureActive()
            status = Status.COMPLETED
        } catch (e: Throwable) {
            status = Status.CANCELLED // when rethrown just below
            e.rethrowIfCancelled(currentCoroutineContext())
            clearWrites()
            val violation = error
            if (violation == null && e is InterruptSignal) {
                status = Status.INTERRUPTED
                interruptPayload = e.payload
            } else {
                status = Status.FAILED
                error = violation ?: e
            }
        } finally {
            durationNanos = engine.nanoTime() - durationNanos
        }
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

/** The fields of an [Execution] that few executions set, kept apart so that an execution stays small. */
private class ExecutionExtras {
    var error: Throwable? = null
    var charges: Charges? = null
    var interruptPayload: String? = null
    var childCompensable: java.util.TreeMap<Int, MutableList<Compensable>>? = null
    var nestedInterrupts: List<dev.trellis.runtime.Interrupt>? = null
}
