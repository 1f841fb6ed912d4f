package dev.trellis.langchain4j

import dev.trellis.graph.Graph
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.ConcurrentHashMap

/**
 * Where the conversations of threads live between runs: each run of a [threadAgent] adds its messages to its thread.
 * Implementations must be safe to call from several runs at once.
 */
public interface ConversationMemory {
    /** The messages of thread [threadId], oldest first (runs in the order they were first saved); empty if none. */
    public fun load(threadId: String): List<Message>

    /**
     * Stores [messages] as what run [runId] added to thread [threadId]. Saving the same run again replaces its
     * messages (a run resumed after a crash saves again): a run's messages are in a thread once.
     */
    public fun save(threadId: String, runId: String, messages: List<Message>)
}

/** A [ConversationMemory] in this process's memory: lost when it ends; for tests and single-process services. */
public class InMemoryConversationMemory : ConversationMemory {
    private val threads = ConcurrentHashMap<String, LinkedHashMap<String, List<Message>>>()

    override fun load(threadId: String): List<Message> {
        val runs = threads[threadId] ?: return emptyList()
        return synchronized(runs) { runs.values.flatten() }
    }

    override fun save(threadId: String, runId: String, messages: List<Message>) {
        val runs = threads.computeIfAbsent(threadId) { LinkedHashMap() }
        synchronized(runs) { runs[runId] = messages.toList() }
    }
}

/**
 * The state of a [threadAgent]: the [threadId] (required in the input), the run's new [messages] (the input
 * messages, then the agent's), the [history] recalled from the thread at the start of the run and the [answer].
 */
public object ThreadState : StateSchema("thread-agent") {
    /** The thread this run belongs to. */
    @JvmField
    public val threadId: StateKey<String> = key("threadId")

    /** This run's messages: the input messages, then every message the agent added. */
    @JvmField
    public val messages: StateKey<List<Message>> = Conversation.key(this, "messages")

    /** The thread's messages recalled at the start of the run (its window), kept in the checkpoint. */
    @JvmField
    public val history: StateKey<List<Message>> = Conversation.key(this, "history")

    /** The agent's answer. */
    @JvmField
    public val answer: StateKey<String> = key("answer", "")
}

/**
 * Conversation memory per thread across runs: a graph over [ThreadState] that runs [agent] (a graph over
 * [AgentState]: a [reactAgent], a [supervisor]) with the thread's earlier messages before the run's own.
 *
 * Node `recall` loads thread [ThreadState.threadId] from [memory] and keeps its last [window] messages (moved forward
 * to the first user message in them, so that no tool result is kept without the call it answers) in
 * [ThreadState.history]: from then on the recalled history is in the run's checkpoints, so a resumed run sees the same
 * history. Subgraph node `agent` runs [agent] with the history followed by [ThreadState.messages]; its new messages
 * are appended to [ThreadState.messages] and its answer written to [ThreadState.answer]. Node `remember` saves the
 * run's messages (input and agent's, not the history) to the thread, keyed by the run id: a run saved twice (resumed
 * after a crash in `remember`) is stored once. System prompts are not stored (they are not in the state).
 *
 * Each run still has its own state (`docs/semantics.md` §9): two runs of one thread at the same time each recall
 * what was saved before they started, and both save.
 *
 * ```kotlin
 * val chat = threadAgent(reactAgent(model, tools), InMemoryConversationMemory(), window = 20)
 * chat.invoke(stateOf(ThreadState.threadId to "ann", ThreadState.messages to listOf(Message.User("Hi, I'm Ann"))))
 * ```
 */
@JvmSynthetic
public fun threadAgent(
    agent: Graph,
    memory: ConversationMemory,
    window: Int = 20,
    id: String = "${agent.id}-thread",
): Graph {
    require(agent.schema === AgentState) {
        "threadAgent runs an agent over AgentState (a reactAgent, a supervisor), but graph '${agent.id}' is over " +
            "'${agent.schema.name}'."
    }
    require(window >= 0) { "window is $window; keep 0 or more messages." }
    return graph(id, ThreadState) {
        val recall =
            node("recall", description = "recall the thread's last $window messages") {
                val threadId = get(ThreadState.threadId)
                val all = runInterruptible(Dispatchers.IO) { memory.load(threadId) }
                set(ThreadState.history, windowOf(all, window))
            }
        val run =
            subgraph("agent", agent) {
                input { set(AgentState.messages, parent[ThreadState.history] + parent[ThreadState.messages]) }
                output { child ->
                    val given = get(ThreadState.history).size + get(ThreadState.messages).size
                    set(ThreadState.messages, child[AgentState.messages].drop(given))
                    set(ThreadState.answer, child[AgentState.answer])
                }
            }
        val remember =
            node("remember", description = "save the run's messages to the thread") {
                val threadId = get(ThreadState.threadId)
                val messages = get(ThreadState.messages)
                runInterruptible(Dispatchers.IO) { memory.save(threadId, runId, messages) }
            }
        start(recall)
        recall then run
        run then remember
    }
}

/** The last [window] of [messages], moved forward to start at a user message (none: empty). */
internal fun windowOf(messages: List<Message>, window: Int): List<Message> {
    val last = messages.takeLast(window)
    val firstUser = last.indexOfFirst { it is Message.User }
    return if (firstUser < 0) emptyList() else last.drop(firstUser)
}

/** Builds a [threadAgent] from Java. */
public object ThreadAgent {
    /**
     * A graph that runs [agent] with the last [window] messages of the thread in `threadId` before the run's own,
     * and saves the run's messages to [memory] (see [threadAgent]).
     *
     * ```java
     * Graph chat = ThreadAgent.of(ReactAgent.builder(model).build(), new InMemoryConversationMemory(), 20);
     * ```
     */
    @JvmStatic
    public fun of(agent: Graph, memory: ConversationMemory, window: Int): Graph = threadAgent(agent, memory, window)
}
