package dev.trellis.functional

import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import java.util.function.Consumer

/**
 * How a workflow run runs, from Kotlin and Java alike: its lease [owner], its [budget], its [instrumentation]
 * (tracing: `TrellisTelemetry` is one), a listener of its events, and the runtime [options] of the node that runs its
 * body (interceptors, dispatcher, clock, random). Immutable; each `with…` returns a copy.
 *
 * ```kotlin
 * val settings = WorkflowSettings.DEFAULT.withOwner("worker-a").withBudget(Budget().withMeter("usd", 2.0))
 * ```
 */
public class WorkflowSettings private constructor(
    /** The owner of the run's lease; a fresh `workflow/<uuid>` per call when null. */
    public val owner: String?,
    /** The run's budget (meters checked at each task's end, `docs/semantics.md` §14); the options' when null. */
    public val budget: Budget?,
    /** What wraps the run (tracing), or null. */
    public val instrumentation: RunInstrumentation?,
    /** Receives every event of the run, in order, on the run's coroutine; or null. */
    public val eventListener: Consumer<RunEvent>?,
    /** The runtime options of the run's node; its `runId` and `checkpointing` must be left unset. */
    public val options: RunOptions,
) {
    init {
        require(options.checkpointing == null) {
            "A workflow records its steps in the store passed to run; leave RunOptions.checkpointing unset."
        }
        require(options.runId == null) {
            "A workflow run's id is the runId passed to run; leave RunOptions.runId unset."
        }
    }

    /** Settings with an owner of its own per call, no budget, no instrumentation and no listener. */
    public constructor() : this(null, null, null, null, RunOptions.DEFAULT)

    /** These settings with [owner] as the lease owner: a process resuming a crashed run may use the same owner. */
    public fun withOwner(owner: String): WorkflowSettings {
        require(owner.isNotBlank()) { "A lease owner must not be blank; pass a name such as \"worker-a\"." }
        return WorkflowSettings(owner, budget, instrumentation, eventListener, options)
    }

    /** These settings with [budget]. */
    public fun withBudget(budget: Budget): WorkflowSettings =
        WorkflowSettings(owner, budget, instrumentation, eventListener, options)

    /** These settings with [instrumentation] wrapping each run (tracing). */
    public fun withInstrumentation(instrumentation: RunInstrumentation): WorkflowSettings =
        WorkflowSettings(owner, budget, instrumentation, eventListener, options)

    /** These settings with [listener] receiving each event of the run. */
    public fun withEventListener(listener: Consumer<RunEvent>): WorkflowSettings =
        WorkflowSettings(owner, budget, instrumentation, listener, options)

    /** These settings with the runtime [options] of the run's node (interceptors, dispatcher, clock, random). */
    public fun withOptions(options: RunOptions): WorkflowSettings =
        WorkflowSettings(owner, budget, instrumentation, eventListener, options)

    /** The defaults. */
    public companion object {
        /** No owner (one per call), budget, instrumentation or listener. */
        @JvmField
        public val DEFAULT: WorkflowSettings = WorkflowSettings()
    }
}
