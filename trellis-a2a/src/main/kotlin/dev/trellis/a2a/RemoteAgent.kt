package dev.trellis.a2a

import io.a2a.A2A
import io.a2a.client.Client
import io.a2a.client.ClientEvent
import io.a2a.client.MessageEvent
import io.a2a.client.TaskEvent
import io.a2a.client.TaskUpdateEvent
import io.a2a.client.config.ClientConfig
import io.a2a.client.transport.jsonrpc.JSONRPCTransport
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig
import io.a2a.spec.AgentCard
import io.a2a.spec.Message
import io.a2a.spec.Part
import io.a2a.spec.Task
import io.a2a.spec.TaskArtifactUpdateEvent
import io.a2a.spec.TaskIdParams
import io.a2a.spec.TaskState
import io.a2a.spec.TaskStatusUpdateEvent
import io.a2a.spec.TextPart
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runInterruptible
import kotlinx.coroutines.withContext
import java.util.UUID
import java.util.function.BiConsumer
import java.util.function.Consumer

/**
 * A remote agent spoken to over A2A (JSON-RPC, streaming when its card allows): its [card] and a client. Make one per
 * remote agent with [connect] and share it between nodes and runs; [close] it when done.
 *
 * ```kotlin
 * RemoteAgent.connect("http://127.0.0.1:9999").use { writer ->
 *     val g = graph("ask", Doc) { start(remoteAgentNode("write", writer, Doc.text) { it[Doc.brief] }) }
 * }
 * ```
 */
public class RemoteAgent private constructor(
    /** The remote agent's card, as fetched by [connect]. */
    public val card: AgentCard,
) : AutoCloseable {
    private val client: Client =
        Client.builder(card)
            .withTransport(JSONRPCTransport::class.java, JSONRPCTransportConfig())
            .clientConfig(ClientConfig.Builder().setStreaming(true).build())
            .build()

    /** The remote agent's name, from its card. */
    public val name: String get() = card.name()

    /**
     * Cancels remote tasks that their exchange left before the agent named them (see [RemoteTask]): on the IO pool,
     * not on the client's thread that delivered the name.
     */
    private val lateCancels = CoroutineScope(SupervisorJob() + Dispatchers.IO)

    /** Closes the client (and gives up cancelling tasks the agent has not named yet). */
    override fun close() {
        lateCancels.cancel()
        client.close()
    }

    override fun toString(): String = "RemoteAgent($name at ${card.url()})"

    /**
     * Sends [text] to the agent as a new task in context [contextId] and follows the task to its end: each update
     * goes to [emit] as an [A2aEvent]; when the agent asks for input, [interrupt] gets its question and returns the
     * answer, which is sent to the same task. Returns the completed task's outcome. Whenever this ends before the
     * task did (cancelled, interrupted, failed), the remote task is cancelled: before this returns when the agent
     * named the task already, else as soon as it names it.
     */
    internal suspend fun exchange(
        text: String,
        contextId: String,
        emit: suspend (Any) -> Unit,
        interrupt: (String) -> String,
    ): RemoteOutcome {
        var message = userMessage(text, contextId, null)
        val task = RemoteTask { id -> lateCancels.launch { cancelQuietly(id) } }
        try {
            while (true) {
                val end = follow(message, emit, task)
                when (end.state) {
                    TaskState.COMPLETED -> {
                        task.ended()
                        return end
                    }
                    TaskState.INPUT_REQUIRED -> message = userMessage(interrupt(end.statusText), contextId, end.taskId)
                    else -> {
                        if (end.state.isFinal) task.ended()
                        throw RemoteAgentException(
                            name,
                            end.taskId,
                            end.state.asString(),
                            "Remote agent '$name' ended task ${end.taskId} ${end.state.asString()}" +
                                (if (end.statusText.isEmpty()) "" else ": ${end.statusText}") +
                                "; give the node a retry policy, or an error route.",
                        )
                    }
                }
            }
        } finally {
            val id = task.abandon()
            if (id != null) withContext(NonCancellable) { cancelQuietly(id) }
        }
    }

    private suspend fun cancelQuietly(taskId: String) {
        runCatching { runInterruptible(Dispatchers.IO) { client.cancelTask(TaskIdParams(taskId)) } }
    }

    /**
     * Sends [message] and relays the task's updates until it completes, ends or asks for input. [remoteTask] learns
     * the task's id from the first update, as it arrives.
     */
    private suspend fun follow(message: Message, emit: suspend (Any) -> Unit, remoteTask: RemoteTask): RemoteOutcome {
        val events = Channel<ClientEvent>(Channel.UNLIMITED)
        val consumer = BiConsumer<ClientEvent, AgentCard> { event, _ ->
            taskOf(event)?.let { remoteTask.named(it.id, ended = it.status.state().isFinal) }
            events.trySend(event)
        }
        val onError = Consumer<Throwable> { events.close(it) }
        try {
            runInterruptible(Dispatchers.IO) { client.sendMessage(message, listOf(consumer), onError, null) }
        } catch (e: kotlinx.coroutines.CancellationException) {
            throw e
        } catch (e: Exception) {
            val problem = "Remote agent '$name' at ${card.url()} refused the message: $e"
            throw RemoteAgentException(name, null, null, problem, e)
        }
        try {
            for (event in events) {
                when (event) {
                    is MessageEvent -> return RemoteOutcome.ofMessage(event.message)
                    is TaskEvent -> {
                        val task = event.task
                        val status = task.status
                        emit(A2aEvent.Status(name, task.id, status.state().asString(), textOf(status.message())))
                        if (task.status.state().ends()) return RemoteOutcome.of(task)
                    }
                    is TaskUpdateEvent -> {
                        val task = event.task
                        when (val update = event.updateEvent) {
                            is TaskStatusUpdateEvent -> {
                                val status = update.status
                                val state = status.state().asString()
                                emit(A2aEvent.Status(name, task.id, state, textOf(status.message())))
                                if (update.isFinal || status.state().ends()) return RemoteOutcome.of(task)
                            }
                            is TaskArtifactUpdateEvent -> {
                                val artifact = update.artifact
                                val label = artifact.name() ?: artifact.artifactId()
                                emit(A2aEvent.Artifact(name, task.id, label, textOf(artifact.parts())))
                            }
                        }
                    }
                }
            }
        } catch (e: RemoteAgentException) {
            throw e
        } catch (e: Exception) {
            if (e is kotlinx.coroutines.CancellationException) throw e
            throw RemoteAgentException(name, null, null, "The stream of remote agent '$name' failed: $e", e)
        }
        throw RemoteAgentException(
            name,
            null,
            null,
            "The stream of remote agent '$name' ended before its task did; give the node a retry policy.",
        )
    }

    /** Makes remote agents. */
    public companion object {
        /**
         * Fetches the agent card at [url] (`/.well-known/agent-card.json` under it) and makes a client for the agent
         * it describes.
         */
        @JvmStatic
        public fun connect(url: String): RemoteAgent = RemoteAgent(A2A.getAgentCard(url))

        /** A client for the agent [card] describes (a card fetched or configured elsewhere). */
        @JvmStatic
        public fun of(card: AgentCard): RemoteAgent = RemoteAgent(card)
    }
}

/** The task [event] is about, as the update left it; null for a plain message. */
private fun taskOf(event: ClientEvent): Task? = when (event) {
    is TaskEvent -> event.task
    is TaskUpdateEvent -> event.task
    else -> null
}

/** How a remote task ended (or paused), read from its last known state. */
internal class RemoteOutcome(
    val taskId: String?,
    val state: TaskState,
    val statusText: String,
    /** The text of each artifact, by name (or id), in the task's order. */
    val artifacts: Map<String, String>,
) {
    /** The text of all artifacts, one after the other; the status message's text when there are none. */
    val text: String get() = if (artifacts.isEmpty()) statusText else artifacts.values.joinToString("\n")

    companion object {
        fun of(task: Task): RemoteOutcome {
            val artifacts = LinkedHashMap<String, String>()
            for (artifact in task.artifacts.orEmpty()) {
                val key = artifact.name() ?: artifact.artifactId()
                artifacts[key] = listOfNotNull(artifacts[key], textOf(artifact.parts())).joinToString("")
            }
            return RemoteOutcome(task.id, task.status.state(), textOf(task.status.message()), artifacts)
        }

        fun ofMessage(message: Message): RemoteOutcome =
            RemoteOutcome(message.taskId, TaskState.COMPLETED, textOf(message), emptyMap())
    }
}

/** Whether a task in this state waits for nothing more from the agent: it ended, or it waits for the user. */
private fun TaskState.ends(): Boolean = isFinal || this == TaskState.INPUT_REQUIRED || this == TaskState.AUTH_REQUIRED

internal fun textOf(message: Message?): String = if (message == null) "" else textOf(message.parts)

internal fun textOf(parts: List<Part<*>>?): String =
    parts.orEmpty().filterIsInstance<TextPart>().joinToString("\n") { it.text }

internal fun userMessage(text: String, contextId: String, taskId: String?): Message =
    Message.Builder()
        .role(Message.Role.USER)
        .parts(listOf<Part<*>>(TextPart(text)))
        .messageId(UUID.randomUUID().toString())
        .contextId(contextId)
        .taskId(taskId)
        .build()
