package dev.trellis.a2a

/**
 * The remote task of one exchange with an agent, so that an exchange that ends before its task did cancels the task,
 * once — also when the exchange ends before the agent named the task. The agent names its task in its first update,
 * which may arrive after the caller's run was cancelled (the served run can start, and the caller be cancelled, before
 * that update crossed the wire). So: [named] is called as each update arrives (on the A2A client's threads, before the
 * exchange reads the update); the exchange calls [ended] when the agent ended the task itself, and [abandon] when the
 * exchange ends. An abandoned task is cancelled now if named ([abandon] returns its id), else [cancelWhenNamed] gets
 * its id as soon as the agent names it.
 */
internal class RemoteTask(private val cancelWhenNamed: (String) -> Unit) {
    private var id: String? = null
    private var ended = false
    private var abandoned = false
    private var cancelSent = false

    /**
     * An update of task [taskId] arrived (the first name counts: one exchange has one task); [ended] when the update
     * ended it.
     */
    fun named(taskId: String, ended: Boolean) {
        val cancel = synchronized(this) {
            if (id == null) id = taskId
            if (ended) this.ended = true
            takeCancel()
        }
        if (cancel != null) cancelWhenNamed(cancel)
    }

    /** The agent ended the task (completed, failed, rejected, cancelled): there is nothing to cancel. */
    @Synchronized
    fun ended() {
        ended = true
    }

    /** The exchange ends: returns the id of the task to cancel now, or null (none, or cancelled once named). */
    @Synchronized
    fun abandon(): String? {
        abandoned = true
        return takeCancel()
    }

    /** The task's id when it is to be cancelled now, and not yet: abandoned, named and not ended. */
    private fun takeCancel(): String? {
        val taskId = id
        if (!abandoned || ended || cancelSent || taskId == null) return null
        cancelSent = true
        return taskId
    }
}
