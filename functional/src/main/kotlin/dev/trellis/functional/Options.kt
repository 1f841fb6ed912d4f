package dev.trellis.functional

import dev.trellis.runtime.Budget
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions

/** These options for run [runId], with [checkpointing] and [budget] (the others as they are). */
internal fun RunOptions.withRunId(
    runId: String,
    checkpointing: Checkpointing?,
    budget: Budget? = this.budget,
): RunOptions = RunOptions(
    runId,
    dispatcher,
    clock,
    timeSource,
    random,
    executionHistoryLimit,
    checkpointing,
    control,
    interceptors,
    cache,
    budget,
    compensateOnCancel,
)
