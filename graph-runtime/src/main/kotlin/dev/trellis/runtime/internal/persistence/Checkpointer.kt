package dev.trellis.runtime.internal.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.internal.CallNames
import dev.trellis.runtime.internal.checkpoint.ChildData
import dev.trellis.runtime.internal.checkpoint.IsoWriter
import dev.trellis.runtime.internal.checkpoint.PayloadTexts
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.internal.checkpoint.PositionEncoder
import dev.trellis.runtime.internal.events.RunRecorder
import dev.trellis.runtime.internal.execution.GraphRuntime
import dev.trellis.runtime.internal.policies.CompensationLog
import dev.trellis.runtime.internal.scheduling.Position
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.withContext
import java.time.Clock
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap

/*
 * Checkpoint writing (`docs/persistence.md`): the [Checkpointer] of a run numbers its checkpoints, writes them full or
 * as deltas through the run's lease, and collects what changed since the last one; a child run's checkpoints go into
 * its parent's ([Upstream]). When an engine saves is `RunCheckpoints.kt`'s; the lease is `RunLease.kt`'s.
 */

/** Where a child run's checkpoints go: into the [parent] run's, under [key] (`research#2`, `summarize#1[3]`). */
internal class Upstream(val parent: Checkpointer, val key: String)

/**
 * Writes a run's checkpoints: holds the run's lease (one writer per run, fenced), numbers checkpoints, and
 * collects what changed since the last one so that most checkpoints are small deltas.
 *
 * A child run (subgraph node, map task) has a checkpointer with an [upstream]: it claims nothing and writes no
 * record of its own; each of its checkpoints becomes a patch of its entry in the parent's [children], which the
 * parent writes as a record that carries only that patch (`docs/persistence.md`, nested checkpoints). Saves of a
 * graph with composite nodes are serialized by a mutex: a run's own saves come from its driver, its children's from
 * their coroutines. A graph without composite nodes has no children, so its driver is its only saver and no lock is
 * taken.
 */
internal class Checkpointer(
    private val graph: Graph,
    private val runId: String,
    val config: Checkpointing,
    /** Where the payload buffer comes from and goes back to when the run ends. */
    private val runtime: GraphRuntime,
    private val clock: Clock,
    /** The sequence of the last checkpoint of this run (0 when it has none). */
    private var sequence: Long,
    private val forkedFrom: CheckpointRef?,
    private val upstream: Upstream? = null,
) {
    /** Whether this is a child run's checkpointer, writing through its parent's. */
    val nested: Boolean get() = upstream != null

    /** Serializes saves when children may save alongside the driver; `null` when the run has no children. */
    private val saving: Mutex? = if (graph.hasComposites) Mutex() else null

    /**
     * Runs [block] holding [saving], when there is one. [block] is inlined once, not once with the lock and once
     * without (`saving?.withLock(block) ?: block()`): each copy's locals would be fields of [checkpoint]'s suspend frame,
     * an object per checkpoint.
     */
    private suspend inline fun <T> serialized(block: () -> T): T {
        val lock = saving
        lock?.lock()
        try {
            return block()
        } finally {
            lock?.unlock()
        }
    }

    /**
     * The buffer payloads are written to, reused from one checkpoint to the next (see [payloadOf]) and, once the run
     * ended ([close]), by the next run of the graph.
     */
    private var buffer = runtime.takeBuffer() ?: StringBuilder(INITIAL_BUFFER)

    /** Whether [buffer] was given to the next run: this run saves nothing more. */
    private var bufferGiven = false

    /** Which nodes a checkpoint records as ready to run again, one flag per node; filled anew when some do. */
    val rerunBuffer = BooleanArray(graph.topology.size)

    /** The payloads' text between `createdAt` and the status ([PositionEncoder.runHead]). */
    val payloadHead: String = PositionEncoder.runHead(graph, runId)

    /** The payloads' text after the status ([PositionEncoder.schemaText]). */
    val payloadSchema: String = PositionEncoder.schemaText(graph)

    /** The graph's node ids and key names as payload text. */
    val texts: PayloadTexts = runtime.payloadTexts

    /** Whether [rerunBuffer] may hold a flag set: it is cleared only then. */
    var rerunSet = false

    /** Writes the payloads' `createdAt`, remembering the last second's text. */
    val iso = IsoWriter()

    /** The emptied payload buffer, for the one save under way. */
    fun payloadBuffer(): StringBuilder {
        check(!bufferGiven) { "Run '$runId' saves a checkpoint after it ended." }
        return buffer.also { it.setLength(0) }
    }

    /** The text of [out] (the [payloadBuffer]); a buffer that grew past [MAX_KEPT_BUFFER] chars is let go. */
    fun payloadOf(out: StringBuilder): String {
        val text = out.toString()
        if (out.capacity() > MAX_KEPT_BUFFER) buffer = StringBuilder(INITIAL_BUFFER)
        return text
    }

    /** The child runs and map tasks of this run in flight, as its next full checkpoint records them. */
    val children = ConcurrentHashMap<String, ChildData>()

    /** Starts [children] from the entries restored with the run. */
    fun seedChildren(restored: Map<String, ChildData>) {
        children.putAll(restored)
    }

    /** Forgets the entries of the execution [key] (and its map tasks) once it ended: they are history then. */
    fun dropChildren(key: String) {
        if (children.isEmpty()) return
        val tasks = "$key["
        children.keys.removeIf { it == key || it.startsWith(tasks) }
    }

    /**
     * Applies [patch] to the entry [key] of [children] and, when every step is saved, writes it as a record of its
     * own; returns the sequence of the run's latest checkpoint.
     */
    suspend fun saveChild(key: String, patch: ChildData): Long {
        serialized {
            children[key] = children[key]?.plus(patch) ?: patch
            if (!everyStep) return sequence
            val createdAt = Instant.now(clock)
            val payload = PositionCodec.childrenOnly(graph, runId, mapOf(key to patch), createdAt)
            append(payload, false, "RUNNING", createdAt, step = true)
            return sequence
        }
    }

    /** The sequence of the run's last checkpoint (0 when it has none). */
    val lastSequence: Long get() = sequence

    /**
     * Writes [payload] as the run's next record (through the parent for a child run) and advances [sequence].
     * Inline, as [save], so that a save takes no suspend frame of its own beyond [checkpoint]'s and the store's.
     */
    private suspend inline fun append(
        payload: String,
        full: Boolean,
        status: String,
        createdAt: Instant,
        step: Boolean,
    ) {
        if (upstream != null) {
            sequence = upstream.parent.saveChild(upstream.key, ChildData(chain = listOf(payload), reset = full))
            return
        }
        val record = record(payload, full, status, createdAt)
        val behind = behindWriter
        if (behind != null) {
            if (step) {
                behind.submit(record)
                sequence = record.sequence
                return
            }
            behind.flush()
        }
        config.store.append(heldLease(), record)
        sequence = record.sequence
    }

    /**
     * Writes the step checkpoints behind the run ([Checkpointing.Durability.ASYNC], every step saved); `null` when
     * each is waited for, and for a child run (its parent's decides).
     */
    private val behindWriter: BehindWriter? =
        if (upstream == null && config.durability == Checkpointing.Durability.ASYNC && everyStep) {
            BehindWriter(config.store, ::heldLease)
        } else {
            null
        }

    /** The lease the run writes with; a run that holds none cannot save. */
    private fun heldLease(): Lease =
        lease?.current ?: throw IllegalStateException("Run '$runId' has no lease; it cannot save checkpoints.")

    /** The run's next record. Not a suspend function: its boxed parent sequence is then a cached `Long`. */
    private fun record(payload: String, full: Boolean, status: String, createdAt: Instant) = CheckpointRecord(
        runId = runId,
        sequence = sequence + 1,
        parentSequence = if (sequence == 0L) null else sequence,
        graphId = graph.id,
        schemaVersion = graph.schema.version,
        createdAt = createdAt,
        status = status,
        kind = if (full) CheckpointRecord.Kind.FULL else CheckpointRecord.Kind.DELTA,
        payload = payload,
        forkedFrom = if (sequence == 0L) forkedFrom else null,
    )

    private var sinceFull = 0
    private val writeKeys = ArrayList<Int>()
    private val writeValues = ArrayList<Any?>()

    /** The keys written since the last checkpoint. */
    val changedKeys = IndexSet(graph.topology.keys.size)

    /** The nodes whose executions completed since the last checkpoint. */
    val changedNodes = IndexSet(graph.topology.size)

    /** Whether the last checkpoint saved was a full one. */
    var lastWasFull: Boolean = false
        private set

    /**
     * Whether the next checkpoint must be full: the first one written by each process, so that a delta chain
     * never spans two processes (or two schema versions after a migration).
     */
    private var nextFull: Boolean = true

    val everyStep: Boolean get() = config.mode == Checkpointing.Mode.EVERY_STEP

    /** Whether a save found that another process took the run over: the run then saves nothing more. */
    var fencedOut: Boolean = false
        private set

    /** The run's lease, claimed by [open]; null for a child run, which writes through its parent's. */
    private val lease: RunLease? = if (upstream == null) RunLease(runId, config, clock) else null

    /**
     * Claims the run and checks that it may start (a [fresh] run's id is unused; a resumed run did not advance since
     * its position was loaded). With [timedRenewal] (a run in real time) [LeaseRenewal] renews the lease until
     * [close]; a run in virtual time runs [keepLeaseAlive] itself (see [RunLease]).
     */
    suspend fun open(fresh: Boolean, timedRenewal: Boolean) {
        val lease = lease ?: return
        lease.claim(timedRenewal)
        try {
            checkOpened(fresh)
        } catch (e: Throwable) {
            // Cancelled or refused after the claim: the lease must not outlive this call.
            withContext(NonCancellable) { close() }
            throw e
        }
    }

    private suspend fun checkOpened(fresh: Boolean) {
        val existing = if (fresh) config.store.latest(runId) else null
        if (existing != null) {
            throw IllegalStateException(CallNames.current().runIdTaken(runId, existing.status))
        }
        if (!fresh) {
            // The position was loaded before the claim: if another process advanced the run in between (it resumed
            // and released it), continuing would run completed nodes again. Give up before any node starts.
            val latest = config.store.latest(runId)?.sequence ?: 0L
            if (latest != sequence) {
                throw IllegalStateException(
                    "Run '$runId' advanced to checkpoint $latest after this process loaded checkpoint $sequence " +
                        "(another process resumed it in between); nothing was run. Resume it again to continue from " +
                        "its latest checkpoint.",
                )
            }
        }
    }

    /**
     * Ends the run's saving: gives the payload buffer to the next run and releases the lease, once; a failure to
     * release is ignored (the lease then expires on its own).
     */
    suspend fun close() {
        if (!bufferGiven) {
            bufferGiven = true
            runtime.giveBuffer(buffer)
        }
        // The step checkpoints still being written go in before the lease goes (written once, by this run).
        behindWriter?.close()
        lease?.release()
    }

    /** Renews the lease for as long as the run lasts, for a run in virtual time (see [RunLease.keepAlive]). */
    suspend fun keepLeaseAlive() {
        lease?.keepAlive()
    }

    fun recordWrite(key: Int, value: Any?) {
        writeKeys += key
        writeValues += value
        changedKeys.add(key)
    }

    fun recordNode(node: Int) {
        changedNodes.add(node)
    }

    /** The writes since the last checkpoint, in the order they were merged. */
    val writeCount: Int get() = writeKeys.size

    fun writeKeyAt(i: Int): Int = writeKeys[i]

    fun writeValueAt(i: Int): Any? = writeValues[i]

    /**
     * Saves a checkpoint whose payload [build] writes (given whether it is full and its creation time);
     * [lastSequence] and [lastWasFull] then tell its sequence and kind.
     * @throws FencedOutException when another process took the run over.
     */
    private suspend inline fun save(
        status: String,
        forceFull: Boolean,
        step: Boolean,
        build: (full: Boolean, createdAt: Instant) -> String,
    ) {
        serialized {
            val full = forceFull || nextFull || sinceFull + 1 >= config.fullSnapshotEvery
            val createdAt = Instant.now(clock)
            val payload = build(full, createdAt)
            append(payload, full, status, createdAt, step)
            sinceFull = if (full) 0 else sinceFull + 1
            nextFull = false
            lastWasFull = full
            writeKeys.clear()
            writeValues.clear()
            changedKeys.clear()
            changedNodes.clear()
        }
    }

    /**
     * Saves a checkpoint of the run at [position] in [state], labelled [status] — full when [full] or when it is
     * due, else a delta; [lastSequence] and [lastWasFull] then tell its sequence and kind. A [step]'s checkpoint is
     * written behind the run with [Checkpointing.Durability.ASYNC]; any other waits for those before it.
     * @throws FencedOutException when another process took the run over ([fencedOut] is then set).
     */
    suspend fun checkpoint(
        status: String,
        full: Boolean,
        state: State,
        position: Position,
        recorder: RunRecorder,
        compensationLog: CompensationLog? = null,
        step: Boolean = false,
    ) {
        try {
            val held = compensationLog?.entries?.size ?: 0
            save(status, full, step) { isFull, createdAt ->
                PositionEncoder.payload(
                    graph,
                    status,
                    isFull,
                    this,
                    state,
                    position,
                    recorder.nodeStatus,
                    recorder.interrupts,
                    recorder.errors,
                    createdAt,
                    compensationLog,
                )
            }
            if (compensationLog != null) compensationLog.saved = held
        } catch (e: FencedOutException) {
            fencedOut = true
            throw e
        }
    }
}

/** The capacity the payload buffer starts with: a chain step's delta is about 450 chars. */
private const val INITIAL_BUFFER = 1_024

/** A delta payload buffer larger than this (chars) after a save is dropped rather than kept for the next one. */
private const val MAX_KEPT_BUFFER = 65_536
