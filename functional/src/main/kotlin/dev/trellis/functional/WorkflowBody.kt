package dev.trellis.functional

/**
 * The body of a workflow written in Java (`Workflow.define`): ordinary code that calls its durable steps through
 * [WorkflowContext] and returns the workflow's output. It runs on a thread of its own and may block; its exception,
 * checked ones included, fails the run as it is.
 *
 * ```java
 * WorkflowBody<String, String> body = (flow, topic) -> flow.task("write", String.class, () -> "about " + topic);
 * ```
 */
public fun interface WorkflowBody<I, O> {
    /** Runs the workflow on [input], calling its steps through [flow]. */
    @Throws(Exception::class)
    public fun run(flow: WorkflowContext, input: I): O
}
