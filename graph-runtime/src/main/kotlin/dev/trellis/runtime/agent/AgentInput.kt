package dev.trellis.runtime.agent

/**
 * What an agent node gives its agent: the [prompt] built from the run's state, and where the call comes
 * from ([runId], [nodeId], [executionCount], [attempt]).
 */
public class AgentInput(
    /** The prompt, built by the node's `prompt` function from the state at the start of the attempt. */
    public val prompt: String,
    /** The id of the run. */
    public val runId: String,
    /** The id of the agent node. */
    public val nodeId: String,
    /** How many times the node started in this run, this execution included. */
    public val executionCount: Int,
    /** The attempt of this execution, 1 for the first. */
    public val attempt: Int,
) {
    override fun toString(): String = "AgentInput($nodeId#$executionCount attempt=$attempt, prompt=$prompt)"
}
