package dev.trellis.runtime.internal.composition

import dev.trellis.graph.Composite
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.TaskError
import dev.trellis.graph.TaskFailure
import dev.trellis.runtime.ConflictingUpdateException
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.ChildData
import dev.trellis.runtime.internal.checkpoint.PersistenceJson
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.internal.checkpoint.Restored
import dev.trellis.runtime.internal.checkpoint.WriteData
import dev.trellis.runtime.internal.events.eventHead
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.execution.InterruptSignal
import dev.trellis.runtime.internal.persistence.Checkpointer
import dev.trellis.runtime.internal.persistence.restore
import dev.trellis.runtime.internal.policies.addChildCompensable
import dev.trellis.runtime.internal.policies.compensableOfTask
import dev.trellis.runtime.internal.policies.decodeCompensables
import dev.trellis.runtime.internal.policies.meters
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.complete
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.atomic.AtomicReference

/*
 * Subgraph and map nodes (`docs/semantics.md` §11). To the scheduler they are nodes like any other: their body hands
 * the runtime's node scope the node's [Composite] spec, and what happens inside one execution is here — child runs
 * (an [Engine] of the child graph, with a [Nesting] that names its place, sharing the run's event channel and writing
 * its checkpoints through the parent's [Checkpointer]) and map tasks (an [Execution] per item, run by at most
 * `maxConcurrency` workers, their writes folded in task order).
 */

/** The key of [execution]'s child runs and tasks in checkpoints: `research#2` (node id, execution number). */
internal fun childKey(execution: Execution): String = execution.node.id + "#" + execution.number

/**
 * One child run of a subgraph node, its output written through [scope]. Inline, as [runChild]: a child run takes no
 * suspend frames beyond the node's own and the child's.
 */
internal suspend inline fun Engine.runSubgraph(execution: Execution, scope: NodeScope, spec: Composite.Subgraph) {
    // The key names the child in checkpoints; a run without any never needs it.
    val key = if (checkpointer == null && restoredChildren.isEmpty()) "" else childKey(execution)
    val mapping = spec.mapping
    // Untimed, without interceptors (one could proceed twice at once) and while this run drives alone, no other child
    // run of the graph can run beside it (Nesting.alone).
    val alone = driveRight == null && scope === execution && interceptors == null
    val result = runChild(execution, spec.graph, key, execution.path, alone) {
        // Key-to-key inputs read only keys of the node's slice (the mapping's): the snapshot reads the same values
        // as the slice's view, which is made only for an input block (docs/semantics.md §12).
        mapping.inputFor(if (mapping.hasBlocks) scope.state else execution.snapshot)
    }
    spec.mapping.applyOutput(scope, result.state)
}

/**
 * Runs a child run of [graph] at [path] for [execution] and returns its result when it completed: restored from
 * the checkpoints under [key] when the run was restored with one in flight, else from [input]; [alone] when no other
 * child run of [graph] can run beside it ([Nesting.alone]). A failed child run fails the attempt with its first
 * error; an interrupted one ends it INTERRUPTED with the child's interrupts.
 */
internal suspend inline fun Engine.runChild(
    execution: Execution,
    graph: Graph,
    key: String,
    path: String,
    alone: Boolean,
    input: () -> State,
): RunResult {
    // Only what is needed after the child run is kept across it: the suspend frame holds fewer locals.
    val child = childRun(graph, key, path, alone, input)
    // The first attempt's start is the child run's (a later attempt's start is not kept: the child reads the clock).
    if (execution.attempt == 1) child.startAt(execution.durationNanos)
    var handUp = true
    val result = try {
        child.execute().also { handUp = it.status != Status.INTERRUPTED }
    } finally {
        // An interrupted child keeps its list in its own checkpoints: it comes back with the child on resume.
        child.compensationLog?.let {
            if (handUp) (execution.owner ?: execution).addChildCompensable(execution.task, it.entries)
        }
    }
    return childEnded(execution, child, path, result)
}

/** The engine of a child run of [graph] at [path]: restored from [key]'s checkpoints when it was in flight, else new. */
internal inline fun Engine.childRun(
    graph: Graph,
    key: String,
    path: String,
    alone: Boolean,
    input: () -> State,
): Engine {
    val nesting = Nesting(path, key, this, childPlanOf(graph), alone)
    val restored = restoredChildren.remove(key)?.let { restoreChild(graph, key, it) }
    val answers = if (answers.isEmpty) emptyMap() else answers.takeUnder(nesting.prefix)
    return if (restored != null && restored.data.status != Status.FAILED.name) {
        Engine(graph, restored.state, childOptions, outbox.log, restored, answers, nesting = nesting, fresh = false)
    } else {
        Engine(graph, input(), childOptions, outbox.log, null, answers, nesting = nesting)
    }
}

/**
 * What follows [child]'s run: its charges and position, its [result] kept under [path]; returns the result when the
 * child run completed, else fails or interrupts [execution]'s attempt.
 */
internal fun Engine.childEnded(execution: Execution, child: Engine, path: String, result: RunResult): RunResult {
    // Its charges count toward this run's meters through the execution that ran it (`docs/semantics.md` §13.4).
    child.position.meters?.let { execution.chargeAll(it.totals) }
    // The child run ended (its nodes with it): the next child run of its graph may take its position (not when it
    // saved checkpoints, which read positions: `docs/persistence.md`).
    if (child.checkpointer == null) {
        val nesting = child.nesting!!
        if (nesting.alone) nesting.plan.spare = child.position else nesting.plan.runtime.givePosition(child.position)
    }
    childResultsMap()[path] = result
    // A child run stopped because the store stayed unreachable: so does this run (`RunCheckpoints.kt`).
    result.stoppedBy?.let { throw it }
    when (result.status) {
        Status.COMPLETED -> return result
        Status.INTERRUPTED -> {
            execution.nestedInterrupts = result.interrupts
            throw InterruptSignal(result.interrupts.firstOrNull()?.payload ?: "")
        }
        else -> throw result.errors.first()
    }
}

/** A child run's position from its checkpoints since its last full one, or null when it has none yet. */
internal fun Engine.restoreChild(graph: Graph, key: String, data: ChildData): Restored? {
    if (data.chain.isEmpty()) return null
    val where = "child run '$key' in the checkpoints of run '$runId'"
    val chain = data.chain.map { PositionCodec.unwrap(graph, it, where) }
    return PositionCodec.restore(graph, chain, options.checkpointing?.migrations ?: emptyList(), where)
}

/**
 * The options of this run's child runs: the same run id, time, dispatcher, checkpoints and run-level interceptors (they
 * wrap the nodes of child runs too, `docs/semantics.md` §13.1); no control and no budget of their own (their charges
 * count toward this run's, §13.4).
 */
internal fun childOptionsOf(options: RunOptions, runId: String): RunOptions = options.with(runId, null, null)

/** What a finished map task left: its writes (keys by index, values), or its collected failure. */
private class TaskWrites(val keys: IntArray, val values: Array<Any?>)

/**
 * Runs the tasks of a map node's [execution] and writes their writes through [scope] in task order. Tasks already
 * finished in the checkpoints it was restored from are not run again.
 */
internal suspend fun Engine.runMap(execution: Execution, scope: NodeScope, spec: Composite.Map) {
    val key = childKey(execution)
    val restored = restoredChildren.remove(key)
    val items: List<*> = restored?.items?.let { decodeItems(spec.over, it) } ?: scope.state[spec.over]
    val n = items.size
    if (n == 0) return
    val writer = checkpointer
    if (writer != null && restored?.items == null) {
        writer.saveChild(key, ChildData(items = PositionCodec.encodeValue(spec.over, items)))
    }
    val outcomes = arrayOfNulls<Any>(n) // TaskWrites, Execution (completed), TaskError, or interrupts
    val pending = IntArray(n)
    var pendingCount = 0
    val anyRestored = restoredChildren.isNotEmpty()
    for (i in 0 until n) {
        val done = if (anyRestored) restoredChildren["$key[$i]"] else null
        when {
            done?.done == true -> {
                restoredChildren.remove("$key[$i]")
                outcomes[i] = decodeWrites(done.writes)
                execution.chargeAll(decodeCharges(done.meters))
                if (done.compensable.isNotEmpty()) {
                    execution.addChildCompensable(
                        i,
                        decodeCompensables(done.compensable),
                    )
                }
            }
            done?.error != null -> {
                restoredChildren.remove("$key[$i]")
                outcomes[i] = done.error
                execution.chargeAll(decodeCharges(done.meters))
            }
            else -> pending[pendingCount++] = i
        }
    }
    val failure = AtomicReference<Throwable>()
    val group = Job(currentCoroutineContext()[Job])
    // On the node dispatcher: a map the driver runs inline is on the caller's thread, which tasks must not share.
    val tasks = CoroutineScope(currentCoroutineContext() + group + childContext)
    TaskWorkers(tasks, pendingCount, minOf(spec.maxConcurrency, pendingCount)) { slot ->
        val i = pending[slot]
        outcomes[i] = runTask(execution, spec, key, i, items[i], writer, group, failure)
    }.start()
    group.complete()
    group.join()
    failure.get()?.let { throw it }
    // A task whose child run was drained interrupts the map too, with no interrupt of its own.
    if (outcomes.any { it is Interrupts }) {
        val interrupts = outcomes.flatMap { (it as? Interrupts)?.list.orEmpty() }
        execution.nestedInterrupts = interrupts
        throw InterruptSignal(interrupts.firstOrNull()?.payload ?: "")
    }
    foldTaskWrites(execution, scope, spec, outcomes)
}

/** The interrupts of a task that ended INTERRUPTED (empty when its child run was drained). */
private class Interrupts(val list: List<Interrupt>)

/**
 * Runs task [i] of a map: its start and end events, its attempts (the map node's retry and timeout), its checkpoint.
 * Returns what [runMap] folds: the completed [Execution], a [TaskError] (collected), [Interrupts], or null.
 */
private suspend fun Engine.runTask(
    execution: Execution,
    spec: Composite.Map,
    key: String,
    i: Int,
    item: Any?,
    writer: Checkpointer?,
    group: Job,
    failure: AtomicReference<Throwable>,
): Any? {
    val body = spec.body
    val task = if (body != null) MapTask(execution, i, item, body) else SubgraphTask(execution, i, item, spec, key)
    val node = execution.node.id
    outbox.nodeSend { seq -> RunEvent.NodeStarted(task.eventHead(seq, now())) }
    try {
        task.runNow()
    } finally {
        // A task's charges are its map execution's, whatever its end (`docs/semantics.md` §13.4).
        task.charges?.let { execution.chargeAll(it.amounts) }
        if (outbox.enabled) withContext(NonCancellable) { sendTaskEnd(task) }
    }
    val charged = task.charges?.amounts?.mapValuesTo(LinkedHashMap()) { it.value.toPlainString() } ?: emptyMap()
    return when (task.status) {
        Status.COMPLETED -> {
            val compensable = if (writer == null) emptyList() else compensableOfTask(execution, i)
            writer?.saveChild(
                "$key[$i]",
                ChildData(
                    reset = true,
                    done = true,
                    writes = encodeWrites(task),
                    meters = charged,
                    compensable = compensable,
                ),
            )
            task
        }
        Status.INTERRUPTED -> Interrupts(
            task.nestedInterrupts ?: listOf(Interrupt(node, task.interruptPayload ?: "", task.path)),
        )
        Status.FAILED -> {
            val error = task.error!!
            if (spec.onTaskFailure == TaskFailure.FAIL_FAST) {
                if (failure.compareAndSet(null, error)) group.cancel()
                null
            } else {
                val collected = TaskError(i, error.javaClass.name, error.message)
                writer?.saveChild("$key[$i]", ChildData(reset = true, error = collected, meters = charged))
                collected
            }
        }
        else -> null
    }
}

private suspend fun Engine.sendTaskEnd(task: Execution) {
    outbox.send { seq ->
        val head = task.eventHead(seq, now())
        when (task.status) {
            Status.COMPLETED -> RunEvent.NodeCompleted(head, task.attempt, task.durationNanos)
            Status.FAILED -> RunEvent.NodeFailed(head, task.attempt, task.error!!, task.durationNanos)
            else -> RunEvent.NodeCancelled(head)
        }
    }
}

/**
 * Writes the tasks' writes through [scope] in task order, and the collected failures to the map's errors key. Two
 * tasks writing one key without a reducer conflict.
 */
private fun Engine.foldTaskWrites(execution: Execution, scope: NodeScope, spec: Composite.Map, outcomes: Array<Any?>) {
    val keys = topology.keys
    var writers: IntArray? = null
    val errors = ArrayList<TaskError>(0)
    for (i in outcomes.indices) {
        when (val outcome = outcomes[i]) {
            is Execution -> for (w in 0 until outcome.writeCount) {
                writers = write(execution, scope, keys, writers, i, outcome.writeKeyAt(w), outcome.writeValueAt(w))
            }
            is TaskWrites -> for (w in outcome.keys.indices) {
                writers = write(execution, scope, keys, writers, i, outcome.keys[w], outcome.values[w])
            }
            is TaskError -> errors += outcome
        }
    }
    val errorsKey = spec.errors
    if (errorsKey != null && errors.isNotEmpty()) scope.set(errorsKey, errors)
}

private fun write(
    execution: Execution,
    scope: NodeScope,
    keys: Array<StateKey<*>>,
    writers: IntArray?,
    task: Int,
    k: Int,
    value: Any?,
): IntArray? {
    var byKey = writers

    @Suppress("UNCHECKED_CAST")
    val key = keys[k] as StateKey<Any?>
    if (key.reducer == null) {
        if (byKey == null) byKey = IntArray(keys.size) { -1 }
        val other = byKey[k]
        if (other >= 0 && other != task) {
            throw ConflictingUpdateException(key.name, "${execution.path}[$task]", "${execution.path}[$other]")
        }
        byKey[k] = task
    }
    scope.set(key, value)
    return byKey
}

private fun Engine.encodeWrites(task: Execution): List<WriteData> {
    val keys = topology.keys
    return List(task.writeCount) {
        val key = keys[task.writeKeyAt(it)]
        WriteData(key.name, PositionCodec.encodeValue(key, task.writeValueAt(it)))
    }
}

private fun Engine.decodeWrites(writes: List<WriteData>): TaskWrites {
    val keyIndex = IntArray(writes.size)
    val values = arrayOfNulls<Any>(writes.size)
    for ((w, write) in writes.withIndex()) {
        val key = graph.schema.keyOrNull(write.key) ?: throw dev.trellis.runtime.CheckpointFormatException(
            "A map task in the checkpoints of run '$runId' writes state key '${write.key}', which schema " +
                "'${graph.schema.name}' does not declare.",
        )
        keyIndex[w] = key.index
        values[w] = PersistenceJson.decodeFromJsonElement(key.serializer, write.value)
    }
    return TaskWrites(keyIndex, values)
}

private fun decodeCharges(meters: Map<String, String>): Map<String, java.math.BigDecimal> =
    meters.mapValues { java.math.BigDecimal(it.value) }

private fun decodeItems(over: StateKey<out List<*>>, element: kotlinx.serialization.json.JsonElement): List<*> =
    PersistenceJson.decodeFromJsonElement(over.serializer, element)
