package dev.trellis.javaapi

import dev.trellis.checkpoint.NodeCache
import dev.trellis.javaapi.internal.NodeExecutors
import dev.trellis.javaapi.internal.blockingInterceptor
import dev.trellis.runtime.Budget
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import kotlinx.coroutines.asCoroutineDispatcher
import java.time.Clock
import java.util.Collections
import java.util.Optional
import java.util.Random
import java.util.concurrent.Executor
import kotlin.random.asKotlinRandom

/**
 * How a [TrellisRunner] runs its graph: where the run's loop and its nodes run, the run id, the clock
 * and random source of a run, where it saves checkpoints and what can drain it. The Java twin of the runtime's
 * `RunOptions`, which takes a `CoroutineDispatcher`, a `TimeSource` and a Kotlin `Random` (`docs/java.md`); immutable,
 * built with [builder].
 *
 * ```java
 * JavaRunOptions settings = JavaRunOptions.builder().executor(myPool).runId("order-42").build();
 * TrellisRunner runner = Trellis.runner(graph, settings);
 * ```
 */
public class JavaRunOptions private constructor(
    internal val runIdOrNull: String?,
    internal val executorOrNull: Executor?,
    /** The wall clock of event timestamps. */
    public val clock: Clock,
    internal val randomOrNull: Random?,
    /** How many executions a `RunResult` keeps (the most recent). */
    public val executionHistoryLimit: Int,
    internal val checkpointingOrNull: Checkpointing?,
    internal val controlOrNull: RunControl?,
    /** The interceptors of every node of every run, outermost first (see [JavaNodeInterceptor]). */
    public val interceptors: List<JavaNodeInterceptor>,
    internal val cacheOrNull: NodeCache? = null,
    internal val budgetOrNull: Budget?,
    /** Whether a cancelled run runs its compensations, as a failed run does (`docs/semantics.md` §13.6). */
    public val compensateOnCancel: Boolean,
    internal val instrumentationOrNull: RunInstrumentation?,
) {
    /** The limits of every run — node executions, time spent, meters; empty (the default) for the graph's alone. */
    public val budget: Optional<Budget> get() = Optional.ofNullable(budgetOrNull)

    /** The run id of every run; empty (the default) for a fresh random id per run. */
    public val runId: Optional<String> get() = Optional.ofNullable(runIdOrNull)

    /** Where the run's loop and parallel nodes run; empty (the default) for the shared coroutine pool. */
    public val executor: Optional<Executor> get() = Optional.ofNullable(executorOrNull)

    /** The random source of retry jitter; empty for the default one. */
    public val random: Optional<Random> get() = Optional.ofNullable(randomOrNull)

    /** Where and how often runs save checkpoints; empty (the default) for none. Needed to resume and fork. */
    public val checkpointing: Optional<Checkpointing> get() = Optional.ofNullable(checkpointingOrNull)

    /** A control to drain runs gracefully; empty (the default) for none. */
    public val control: Optional<RunControl> get() = Optional.ofNullable(controlOrNull)

    /** Where cached nodes keep their results (`docs/semantics.md` §13.5); empty (the default) for none. */
    public val cache: Optional<NodeCache> get() = Optional.ofNullable(cacheOrNull)

    /** What watches every run, e.g. a `TrellisTelemetry` tracing it; empty (the default) for nothing. */
    public val instrumentation: Optional<RunInstrumentation> get() = Optional.ofNullable(instrumentationOrNull)

    internal val runOptions: RunOptions = RunOptions(
        runId = runIdOrNull,
        dispatcher = executorOrNull?.asCoroutineDispatcher(),
        clock = clock,
        random = randomOrNull?.asKotlinRandom() ?: kotlin.random.Random.Default,
        executionHistoryLimit = executionHistoryLimit,
        checkpointing = checkpointingOrNull,
        control = controlOrNull,
        interceptors = interceptors.map { blockingInterceptor(it, NodeExecutors.defaultDispatcher) },
        cache = cacheOrNull,
        budget = budgetOrNull,
        compensateOnCancel = compensateOnCancel,
    )

    /** A builder holding these settings. */
    public fun newBuilder(): Builder = Builder(this)

    override fun toString(): String =
        "JavaRunOptions(runId=$runIdOrNull, executor=$executorOrNull, clock=$clock, " +
            "executionHistoryLimit=$executionHistoryLimit, " +
            "checkpointing=${checkpointingOrNull?.store}, control=$controlOrNull, interceptors=${interceptors.size}, " +
            "cache=$cacheOrNull, budget=$budgetOrNull, instrumentation=$instrumentationOrNull)"

    /** Builds [JavaRunOptions]; every setting is optional. */
    public class Builder internal constructor(from: JavaRunOptions?) {
        private var runId: String? = from?.runIdOrNull
        private var executor: Executor? = from?.executorOrNull
        private var clock: Clock = from?.clock ?: Clock.systemUTC()
        private var random: Random? = from?.randomOrNull
        private var executionHistoryLimit: Int = from?.executionHistoryLimit ?: RunOptions.DEFAULT.executionHistoryLimit
        private var checkpointing: Checkpointing? = from?.checkpointingOrNull
        private var control: RunControl? = from?.controlOrNull
        private val interceptors = ArrayList(from?.interceptors.orEmpty())
        private var cache: NodeCache? = from?.cacheOrNull
        private var budget: Budget? = from?.budgetOrNull
        private var compensateOnCancel: Boolean = from?.compensateOnCancel ?: false
        private var instrumentation: RunInstrumentation? = from?.instrumentationOrNull

        /** Sets the run id of every run; null for a fresh random id per run. */
        public fun runId(runId: String?): Builder = apply { this.runId = runId }

        /**
         * Runs the run's loop and its parallel nodes on [executor]; null for the shared coroutine pool (and, for
         * the blocking `invoke`, the calling thread). Blocking nodes of a [JavaGraph] run on the graph's own
         * executor whatever this is.
         */
        public fun executor(executor: Executor?): Builder = apply { this.executor = executor }

        /** Sets the wall clock of event timestamps. */
        public fun clock(clock: Clock): Builder = apply { this.clock = clock }

        /** Sets the random source of retry jitter, e.g. `new Random(42)` for repeatable runs. */
        public fun random(random: Random?): Builder = apply { this.random = random }

        /** Sets how many executions a `RunResult` keeps (the most recent); 0 keeps none. */
        public fun executionHistoryLimit(limit: Int): Builder = apply { this.executionHistoryLimit = limit }

        /**
         * Saves checkpoints as [checkpointing] says, e.g. `new Checkpointing(new SqliteCheckpointStore(path))`;
         * null (the default) for none. The runner's resume, fork, history and snapshot calls read its store.
         */
        public fun checkpointing(checkpointing: Checkpointing?): Builder = apply { this.checkpointing = checkpointing }

        /** Lets [control] drain the runs (`control.drain()`): they stop gracefully, checkpoint and end INTERRUPTED. */
        public fun control(control: RunControl?): Builder = apply { this.control = control }

        /**
         * Wraps every node's attempts in [interceptor], outside the graph's and the nodes' own interceptors; calls add
         * up, the first installed being the outermost. It runs on the default executor of blocking nodes (virtual
         * threads on JDK 21+, else a shared cached pool).
         */
        public fun intercept(interceptor: JavaNodeInterceptor): Builder = apply { interceptors += interceptor }

        /**
         * Keeps the results of cached nodes (`NodeOptions.cache`) in [cache]: `new InMemoryNodeCache()`, or
         * `new SqliteNodeCache(path)` / `new PostgresNodeCache(dataSource)` to keep them across processes; null (the
         * default) for none, and then a run of a graph with a cached node fails at its start.
         */
        public fun cache(cache: NodeCache?): Builder = apply { this.cache = cache }

        /**
         * Bounds every run by [budget] (`docs/semantics.md` §13.4), e.g.
         * `new Budget().withMeter("usd", 2.0).withMaxNodeExecutions(200).withMaxWallTime(Duration.ofMinutes(5))`; a run
         * over it fails with `LimitExceededException`. Null (the default) for none beyond the graph's limits.
         */
        public fun budget(budget: Budget?): Builder = apply { this.budget = budget }

        /**
         * Whether a cancelled run runs the compensations of its completed executions, as a failed run does (default
         * false); the cancellation then waits for them (`docs/semantics.md` §13.6).
         */
        public fun compensateOnCancel(compensate: Boolean): Builder = apply { compensateOnCancel = compensate }

        /**
         * Lets [instrumentation] watch every run the runner starts, resumes or streams — e.g. a `TrellisTelemetry`
         * (trellis-opentelemetry), which traces each run as a child of the span current on the calling thread:
         * `.instrumentation(new TrellisTelemetry(openTelemetry))`. Null (the default) for none. Forks and runs
         * resumed from a snapshot are not instrumented.
         */
        public fun instrumentation(instrumentation: RunInstrumentation?): Builder =
            apply { this.instrumentation = instrumentation }

        /**
         * Returns the settings.
         *
         * @throws IllegalArgumentException for a blank run id or a negative history limit.
         */
        public fun build(): JavaRunOptions = JavaRunOptions(
            runId,
            executor,
            clock,
            random,
            executionHistoryLimit,
            checkpointing,
            control,
            Collections.unmodifiableList(ArrayList(interceptors)),
            cache,
            budget,
            compensateOnCancel,
            instrumentation,
        )
    }

    /** Defaults and the builder. */
    public companion object {
        /** The defaults: random run ids, the shared coroutine pool, the UTC system clock. */
        @JvmField
        public val DEFAULT: JavaRunOptions = Builder(null).build()

        /** A builder starting from the defaults. */
        @JvmStatic
        public fun builder(): Builder = Builder(null)
    }
}
