package dev.trellis.runtime.agent

/**
 * What an agent can do while it answers: stream what it produces to the run's collectors.
 *
 * Each streamed item becomes a `RunEvent.Custom` of the agent node's execution, with an [AgentEvent] as
 * payload. Streaming suspends while a slow collector catches up (backpressure); nothing is dropped.
 */
public interface AgentScope {
    /** Streams a piece of the reply. */
    public suspend fun token(text: String)

    /** Streams a step of the agent's work: a tool call, a thought, a sub-task. */
    public suspend fun step(description: String)

    /** Streams any other [payload] as a custom event. */
    public suspend fun emit(payload: Any)
}
