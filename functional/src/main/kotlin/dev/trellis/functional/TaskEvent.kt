package dev.trellis.functional

/**
 * What a workflow's tasks do, streamed while it runs as the payloads of `RunEvent.Custom` events of the workflow's
 * node (`docs/functional.md`, `docs/semantics.md` §14): each task's start, its replay from the record, its retries and
 * its end. They come between the node's `NodeStarted` and its end event, in the order they happened; a payload a
 * workflow emits itself (`WorkflowScope.emit`) comes the same way. Events are not durable: a replayed task has one
 * [Replayed] event in the resumed run, and its events of the earlier run are not sent again.
 */
public sealed class TaskEvent(
    /** The task's name. */
    public val name: String,
    /** The task's position in call order, from 0 (its identity with [name]). */
    public val position: Int,
) {
    /** The task started its first attempt. */
    public class Started internal constructor(name: String, position: Int) : TaskEvent(name, position)

    /** The task was completed in an earlier run: its recorded result is returned and it does not run. */
    public class Replayed internal constructor(name: String, position: Int) : TaskEvent(name, position)

    /** Attempt [attempt] failed with [error]; the next one starts after [delay]. */
    public class Retrying internal constructor(
        name: String,
        position: Int,
        /** The attempt that failed. */
        public val attempt: Int,
        /** Why it failed. */
        public val error: Throwable,
        /** The wait before the next attempt. */
        public val delay: java.time.Duration,
    ) : TaskEvent(name, position)

    /** The task completed after [attempts] attempts and its result is recorded. */
    public class Completed internal constructor(
        name: String,
        position: Int,
        /** How many attempts it took. */
        public val attempts: Int,
    ) : TaskEvent(name, position)

    /** The task failed with [error] after [attempts] attempts: the workflow fails. */
    public class Failed internal constructor(
        name: String,
        position: Int,
        /** How many attempts it took. */
        public val attempts: Int,
        /** The failure. */
        public val error: Throwable,
    ) : TaskEvent(name, position)

    override fun toString(): String = "${javaClass.simpleName}($name@$position)"
}
