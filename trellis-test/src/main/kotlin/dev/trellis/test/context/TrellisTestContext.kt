package dev.trellis.test.context

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.events
import dev.trellis.test.internal.TestStore
import dev.trellis.test.internal.timelineHtml
import dev.trellis.test.trajectory.Trajectory
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestCoroutineScheduler
import kotlinx.coroutines.test.runTest
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.CopyOnWriteArrayList

/**
 * What a test of a graph gets from [TrellisExtension] (or the kotest extension): a fresh checkpoint [store], a
 * virtual-time [scheduler], runs that record their events (for [trajectory], and for the timeline page attached to
 * a failing test).
 *
 * ```kotlin
 * @TrellisTest
 * class SupportTest {
 *     @Test
 *     fun answers(trellis: TrellisTestContext) {
 *         val result = trellis.run(supportGraph, stateOf(Support.ticket to "printer on fire"))
 *         trellis.trajectory().assertNodes("classify", "answer")
 *     }
 * }
 * ```
 */
public class TrellisTestContext internal constructor(
    private val opened: TestStore,
    /** The kind of [store]. */
    public val storeKind: StoreKind,
) : AutoCloseable {
    /** The test's checkpoint store: fresh for this test, removed after it. */
    public val store: CheckpointStore get() = opened.store

    /** Where [store] keeps its data: `memory`, a SQLite file, a PostgreSQL schema. */
    public val storeLocation: String get() = opened.location

    /**
     * The virtual clock of the test's runs: [run] runs on it, and scripted models with latency wait on it
     * (`ScriptedModelBuilder.virtualTime(trellis.scheduler)`).
     */
    public val scheduler: TestCoroutineScheduler = TestCoroutineScheduler()

    private val recorded = CopyOnWriteArrayList<RecordedRun>()

    /** The runs of this test so far, in the order they started. */
    public val runs: List<RecordedRun> get() = recorded.toList()

    /** Run options that save checkpoints to [store]. */
    public val options: RunOptions get() = RunOptions(checkpointing = Checkpointing(store))

    /**
     * Runs [graph] from [input] in virtual time (on [scheduler]) with [options] (checkpoints to [store] by
     * default), records its events, and returns its result; a failed run returns its result too (check its
     * status). Call it outside `runTest`; inside, use [execute].
     */
    @JvmOverloads
    public fun run(
        graph: Graph,
        input: State = graph.schema.initialState(),
        options: RunOptions = this.options,
    ): RunResult {
        var result: RunResult? = null
        runTest(StandardTestDispatcher(scheduler)) { result = execute(graph, input, options) }
        return result!!
    }

    /** Like [run], inside a coroutine (a `runTest` body: virtual time is the test's). */
    public suspend fun execute(
        graph: Graph,
        input: State = graph.schema.initialState(),
        options: RunOptions = this.options,
    ): RunResult {
        val events = CopyOnWriteArrayList<RunEvent>()
        recorded += RecordedRun(graph, events)
        graph.events(input, options).toList(events)
        return events.filterIsInstance<RunEvent.Terminal>().last().result
    }

    /** Records the [events] of a run of [graph] started elsewhere, for [trajectory] and the failure timeline. */
    public fun record(graph: Graph, events: List<RunEvent>) {
        recorded += RecordedRun(graph, events.toList())
    }

    /** The trajectory of the last run (with the state after each node when it saved checkpoints to [store]). */
    public fun trajectory(): Trajectory {
        val last = recorded.lastOrNull() ?: throw IllegalStateException(
            "No run yet: run the graph with trellis.run(graph, input) (or record its events) first.",
        )
        return trajectory(last)
    }

    /** The trajectory of [run]. */
    public fun trajectory(run: RecordedRun): Trajectory = runBlocking {
        val saved = run.events.isNotEmpty() && store.history(run.events.first().runId).isNotEmpty()
        if (saved) Trajectory.of(run.events, run.graph, store) else Trajectory.of(run.events)
    }

    /**
     * Writes the timeline page of every run of this test into [directory] as `<name>.html`, `<name>-2.html`...;
     * returns the files.
     */
    public fun writeTimelines(directory: Path, name: String): List<Path> {
        Files.createDirectories(directory)
        return recorded.mapIndexed { i, run ->
            val file = directory.resolve(if (i == 0) "$name.html" else "$name-${i + 1}.html")
            Files.writeString(file, timelineHtml(run.graph, run.result, run.events))
        }
    }

    /** Removes the store. */
    override fun close() {
        opened.close()
    }

    override fun toString(): String = "TrellisTestContext($storeKind at $storeLocation, ${recorded.size} run(s))"

    /** Opens contexts by hand (the extensions open one per test). */
    public companion object {
        /** A context with a fresh store of [kind]; close it after the test. */
        @JvmStatic
        @JvmOverloads
        public fun open(
            kind: StoreKind = StoreKind.MEMORY,
        ): TrellisTestContext = TrellisTestContext(TestStore.open(kind), kind)
    }
}
