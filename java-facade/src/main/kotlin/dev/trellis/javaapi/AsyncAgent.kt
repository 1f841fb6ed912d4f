package dev.trellis.javaapi

import dev.trellis.javaapi.internal.AgentAdapter
import dev.trellis.runtime.agent.Agent
import dev.trellis.runtime.agent.AgentInput
import dev.trellis.runtime.agent.AgentSnapshot
import java.util.Optional
import java.util.concurrent.CompletionStage

/**
 * An agent Java code can implement — usually an LLM with tools — for [JavaGraph.Builder.agentNode]: the runtime's
 * `Agent` with a `CompletionStage` instead of a suspending call.
 *
 * Each call through an agent node is isolated from every other call of the same instance, in one run and across
 * concurrent runs, so one instance can serve them all:
 * - **Sessions** (preferred): when [session] returns a fresh agent, the call goes to that session, which is then
 *   dropped. Sessions of one agent run fully in parallel.
 * - **Snapshot and restore**: otherwise the node takes a [snapshot] before the call and [restore]s it after (also
 *   when the call fails or is cancelled), and calls of one instance are serialized.
 *
 * [call] runs on the run's own threads and must not block: start the work (an async client, or a blocking client
 * on your executor) and return its stage. When the run is cancelled, the stage is cancelled if it is a `Future`.
 *
 * ```java
 * class Reviewer implements AsyncAgent {
 *     private final List<String> history = new ArrayList<>();
 *     public CompletionStage<String> call(AgentInput input, AsyncAgentScope scope) {
 *         history.add(input.getPrompt());
 *         scope.step("reviewing " + input.getNodeId());
 *         return CompletableFuture.supplyAsync(() -> llm.chat(history), ioPool);   // blocking client, own pool
 *     }
 *     public Optional<AgentSnapshot> snapshot() { return Optional.of(new AgentSnapshot(List.copyOf(history))); }
 *     public void restore(AgentSnapshot s) { history.clear(); history.addAll((List<String>) s.getValue()); }
 * }
 * builder.agentNode("review", new Reviewer(), verdict, state -> "Review: " + state.get(draft));
 * ```
 */
public interface AsyncAgent {
    /** The agent's name, shown in events and diagrams; its class's simple name by default. */
    public val name: String get() = javaClass.simpleName

    /**
     * Starts answering [input] and returns a stage completing with the reply. Tokens and steps streamed through
     * [scope] become custom events of the agent node. Must not block.
     */
    public fun call(input: AgentInput, scope: AsyncAgentScope): CompletionStage<String>

    /** A copy of the conversation state, taken before each call when there is no [session]; empty when it keeps none. */
    public fun snapshot(): Optional<AgentSnapshot> = Optional.empty()

    /** Puts back a state taken with [snapshot]; called after each call, also a failed or cancelled one. */
    public fun restore(snapshot: AgentSnapshot) {}

    /**
     * A fresh agent that starts from this one's conversation state and is independent of it, used for one call and
     * dropped; empty when it cannot make one (then calls are serialized). Must be safe to call from several threads.
     */
    public fun session(): Optional<AsyncAgent> = Optional.empty()

    /**
     * This agent as the runtime's `Agent`, e.g. for Kotlin's `agentNode`. Two adapters of one agent are equal, so
     * they share its serialization.
     */
    public fun asAgent(): Agent = AgentAdapter(this)
}

/**
 * What an [AsyncAgent] can do while it answers: stream what it produces, as custom events of the agent node
 * (`AgentEvent.Token`, `AgentEvent.Step`, or any payload). Nothing is dropped; the events come before the node's
 * completion. Called from the agent's own threads (a streaming client's callbacks), it blocks while a slow
 * subscriber catches up; called inside [AsyncAgent.call] itself, it never blocks (the event waits in memory).
 */
public interface AsyncAgentScope {
    /** Streams a piece of the reply. */
    public fun token(text: String)

    /** Streams a step of the agent's work: a tool call, a thought, a sub-task. */
    public fun step(description: String)

    /** Streams any other [payload] as a custom event. */
    public fun emit(payload: Any)
}
