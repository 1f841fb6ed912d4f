package dev.trellis.studio.internal

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.fleet.FleetClient
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunHandle
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.start
import io.ktor.server.cio.CIO
import io.ktor.server.engine.EmbeddedServer
import io.ktor.server.engine.embeddedServer
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.runBlocking
import java.lang.management.ManagementFactory
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

/** A running studio: its store, its graphs, the runs it watches live, the runs it started, and its server. */
internal class Studio private constructor(
    val store: CheckpointStore,
    val token: String?,
    val owner: String,
    /** The fleet's view of runs, when the studio was given a fleet. */
    val fleet: FleetLink?,
) {
    val graphs = ConcurrentHashMap<String, Graph>()
    val live = LiveRuns()

    /** Why a run the studio forked or resumed failed before it could record anything, by run id. */
    val failures = ConcurrentHashMap<String, String>()
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private lateinit var server: EmbeddedServer<*, *>
    lateinit var url: String
        private set
    var port: Int = 0
        private set

    fun register(graph: Graph) {
        val known = graphs.putIfAbsent(graph.id, graph)
        require(known == null || known === graph) {
            "A graph with id '${graph.id}' is registered already; register each graph id once."
        }
    }

    fun graph(graphId: String?): Graph? = graphId?.let { graphs[it] }

    /** The options of a run the studio starts, resumes or forks: checkpoints in the store, leases as [owner]. */
    fun options(runId: String?): RunOptions =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, owner = owner))

    fun startRun(graph: Graph, input: State, runId: String?): RunHandle {
        require(graphs[graph.id] === graph) {
            "Graph '${graph.id}' is not registered with the studio; register it first (register(graph) or " +
                "builder.graph(graph))."
        }
        val id = runId ?: "${graph.id}-${UUID.randomUUID().toString().take(8)}"
        val run = live.begin(id)
        val handle = graph.start(scope, input, options(id)) { event -> live.record(event) }
        run.handle = handle
        return handle
    }

    fun close() {
        scope.cancel()
        server.stop(100, 2_000)
    }

    companion object {
        fun start(
            store: CheckpointStore,
            graphs: List<Graph>,
            host: String,
            port: Int,
            token: String?,
            owner: String?,
            fleet: FleetClient?,
        ): Studio {
            val studio = Studio(store, token, owner ?: defaultOwner(), fleet?.let(::FleetLink))
            graphs.forEach(studio::register)
            val server = embeddedServer(CIO, port = port, host = host) { studioModule(studio) }
            server.start(wait = false)
            studio.server = server
            studio.port = runBlocking { server.engine.resolvedConnectors().first().port }
            val shownHost = if (host == "0.0.0.0" || host == "::") "127.0.0.1" else host
            studio.url = "http://$shownHost:${studio.port}/" + (token?.let { "?token=$it" } ?: "")
            return studio
        }

        private fun defaultOwner(): String =
            "trellis-studio/${ManagementFactory.getRuntimeMXBean().name}/${UUID.randomUUID().toString().take(8)}"
    }
}
