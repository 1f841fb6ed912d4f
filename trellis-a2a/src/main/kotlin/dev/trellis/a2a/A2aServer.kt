package dev.trellis.a2a

import com.sun.net.httpserver.HttpServer
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.StateKey
import dev.trellis.runtime.Checkpointing
import io.a2a.server.events.InMemoryQueueManager
import io.a2a.server.requesthandlers.DefaultRequestHandler
import io.a2a.server.tasks.BasePushNotificationSender
import io.a2a.server.tasks.InMemoryPushNotificationConfigStore
import io.a2a.server.tasks.InMemoryTaskStore
import io.a2a.spec.AgentCapabilities
import io.a2a.spec.AgentCard
import io.a2a.spec.AgentSkill
import io.a2a.spec.TransportProtocol
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler
import java.net.InetSocketAddress
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.ThreadFactory
import java.util.concurrent.atomic.AtomicInteger

/**
 * A Trellis graph served as an A2A agent (JSON-RPC binding, streaming) on the JDK's HTTP server: its agent card at
 * `GET /.well-known/agent-card.json`, tasks at `POST /`. Each task is a run of the graph whose run id is the task's
 * id: the text of the task's message goes to the input key, the run's node completions and custom events stream
 * as `working` updates, a completed run gives one artifact per output key (named after the key) and completes the
 * task, an interrupted run asks for input (`input-required`, with the interrupt's question) and resumes with the
 * next message to the task, a failed run fails the task, and cancelling the task cancels the run. Runs are
 * checkpointed in the server's store (in memory unless [Builder.store] gives one), which interrupts need.
 *
 * ```java
 * try (A2aServer server = A2aServer.builder(graph, question, answer).name("echo").description("Echoes").start()) {
 *     RemoteAgent echo = RemoteAgent.connect(server.getUrl());
 * }
 * ```
 */
public class A2aServer private constructor(
    private val http: HttpServer,
    private val workers: ExecutorService,
    /** The agent card the server publishes. */
    public val card: AgentCard,
) : AutoCloseable {
    /** The server's base URL, `http://host:port` (the agent card's `url`). */
    public val url: String get() = card.url()

    /** The port the server listens on (an ephemeral one when the builder's port was 0). */
    public val port: Int get() = http.address.port

    /** Stops accepting requests, ends the streams still open and stops the server's threads. */
    override fun close() {
        http.stop(0)
        workers.shutdownNow()
    }

    override fun toString(): String = "A2aServer(${card.name()} at $url)"

    /** Configures and starts an [A2aServer]; see [A2aServer.builder]. */
    public class Builder internal constructor(
        private val graph: Graph,
        private val input: StateKey<String>,
        private val outputs: List<StateKey<String>>,
    ) {
        private var name = graph.id
        private var description = "The Trellis graph '${graph.id}'."
        private var version = "1.0.0"
        private var host = "127.0.0.1"
        private var port = 0
        private var store: CheckpointStore? = null
        private val skills = ArrayList<AgentSkill>()

        /** The agent's name in its card (the graph's id by default). */
        public fun name(name: String): Builder = apply { this.name = name }

        /** What the agent does, in its card. */
        public fun description(description: String): Builder = apply { this.description = description }

        /** The agent's version in its card ("1.0.0" by default). */
        public fun version(version: String): Builder = apply { this.version = version }

        /** Adds a skill to the card: an [id], a [name] and what it does ([description]). */
        public fun skill(id: String, name: String, description: String): Builder = apply {
            skills += AgentSkill.Builder().id(id).name(name).description(description).tags(listOf(id)).build()
        }

        /** The address to listen on ("127.0.0.1" by default: loopback only). */
        public fun host(host: String): Builder = apply { this.host = host }

        /** The port to listen on (0 by default: an ephemeral port, see [A2aServer.port]). */
        public fun port(port: Int): Builder = apply { this.port = port }

        /** Where the runs' checkpoints go (an in-memory store by default). */
        public fun store(store: CheckpointStore): Builder = apply { this.store = store }

        /** Binds the port and starts serving. */
        public fun start(): A2aServer {
            val workers = Executors.newCachedThreadPool(daemonThreads("trellis-a2a-${graph.id}"))
            val http = HttpServer.create(InetSocketAddress(host, port), 0)
            val url = "http://$host:${http.address.port}"
            val card =
                AgentCard.Builder()
                    .name(name)
                    .description(description)
                    .url(url)
                    .version(version)
                    .protocolVersion("0.3.0")
                    .preferredTransport(TransportProtocol.JSONRPC.asString())
                    .capabilities(AgentCapabilities.Builder().streaming(true).build())
                    .defaultInputModes(listOf("text"))
                    .defaultOutputModes(listOf("text"))
                    .skills(skills.ifEmpty { listOf(defaultSkill()) })
                    .build()
            val checkpointing = Checkpointing(store ?: InMemoryCheckpointStore(), owner = "trellis-a2a")
            val tasks = InMemoryTaskStore()
            val pushConfigs = InMemoryPushNotificationConfigStore()
            val requests =
                DefaultRequestHandler.create(
                    GraphAgentExecutor(graph, input, outputs, checkpointing),
                    tasks,
                    InMemoryQueueManager(tasks),
                    pushConfigs,
                    BasePushNotificationSender(pushConfigs),
                    workers,
                )
            http.createContext("/", JsonRpcHttp(JSONRPCHandler(card, requests, workers)))
            http.executor = workers
            http.start()
            return A2aServer(http, workers, card)
        }

        private fun defaultSkill(): AgentSkill =
            AgentSkill.Builder().id(graph.id).name(name).description(description).tags(listOf("trellis")).build()
    }

    /** Makes servers. */
    public companion object {
        /**
         * A builder of a server for [graph]: each task's message text goes to [input]; the run's [outputs] become
         * the task's artifacts.
         */
        @JvmStatic
        public fun builder(graph: Graph, input: StateKey<String>, vararg outputs: StateKey<String>): Builder {
            require(input.schema === graph.schema) {
                "Key '${input.name}' is not a key of graph '${graph.id}''s schema; give the key the task's text " +
                    "goes to."
            }
            require(outputs.isNotEmpty()) { "Give A2aServer.builder at least one output key: the task's artifacts." }
            val foreign = outputs.filter { it.schema !== graph.schema }.map { it.name }
            require(foreign.isEmpty()) { "Keys $foreign are not keys of graph '${graph.id}''s schema." }
            return Builder(graph, input, outputs.toList())
        }
    }
}

private fun daemonThreads(prefix: String): ThreadFactory {
    val count = AtomicInteger()
    return ThreadFactory { runnable ->
        Thread(runnable, "$prefix-${count.incrementAndGet()}").apply { isDaemon = true }
    }
}
