package dev.trellis.studio

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.fleet.FleetClient
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunHandle
import dev.trellis.studio.internal.Studio

/**
 * Trellis Studio: a local web app over a [CheckpointStore] to watch runs live, inspect their graphs, timelines,
 * states and diffs, and answer, cancel, resume or fork them — pages and a versioned JSON API (`/api/v1`) served by an
 * embedded server, every asset from the jar (no network needed). See `docs/studio.md`.
 *
 * Start it in one line and open [url]; [close] stops it (the store stays open: it is the caller's):
 *
 * ```kotlin
 * val studio = TrellisStudio.start(store, port = 8080, graphs = listOf(research))
 * println("Trellis Studio at ${studio.url}")
 * ```
 *
 * It listens on the loopback address only unless [Builder.host] names another, which needs a [Builder.token]. The
 * graphs it may run (answer, resume, fork, start) are those registered ([Builder.graph], [register]); runs of other
 * graphs are shown from their checkpoints, read only. Every action goes through the library's public API and the
 * store's leases and fencing: the studio never writes rows itself.
 */
public class TrellisStudio internal constructor(private val studio: Studio) : AutoCloseable {
    /** The address of the runs page, `http://127.0.0.1:PORT/` (with `?token=…` when a token is set). */
    public val url: String get() = studio.url

    /** The port the server listens on (the one chosen by the system when started with port 0). */
    public val port: Int get() = studio.port

    /** Registers [graph] (by its id): the studio may then draw, answer, resume and fork its runs and start new ones. */
    public fun register(graph: Graph) {
        studio.register(graph)
    }

    /**
     * Starts a run of registered [graph] from [input] through the studio, with checkpoints in its store: its page
     * shows it live (server-sent events of its [RunEvent]s).
     */
    @JvmOverloads
    public fun start(graph: Graph, input: State = graph.schema.initialState(), runId: String? = null): RunHandle =
        studio.startRun(graph, input, runId)

    /**
     * Hands the studio one event of a run running elsewhere in this JVM, so that its page is live too: pass this as
     * the run's event listener (`graph.start(scope, input, options, studio::record)`).
     */
    public fun record(event: RunEvent) {
        studio.live.record(event)
    }

    /** Stops the server and the runs the studio started (they end CANCELLED and stay resumable). */
    override fun close() {
        studio.close()
    }

    override fun toString(): String = "TrellisStudio($url)"

    /**
     * How a studio is set up, for Java and for settings beyond [start]'s: `TrellisStudio.builder(store)
     * .graph(research).port(8080).start()`.
     */
    public class Builder internal constructor(private val store: CheckpointStore) {
        private val graphs = ArrayList<Graph>()
        private var host = LOOPBACK
        private var port = 0
        private var token: String? = null
        private var owner: String? = null
        private var fleet: FleetClient? = null

        /** Registers [graph] (see [TrellisStudio.register]). */
        public fun graph(graph: Graph): Builder = apply { graphs += graph }

        /** Registers [graphs]. */
        public fun graphs(graphs: Iterable<Graph>): Builder = apply { this.graphs += graphs }

        /** The port to listen on; 0 (the default) lets the system choose a free one. */
        public fun port(port: Int): Builder = apply {
            require(port in 0..65_535) { "A port is from 0 to 65535, but was $port; pass 0 for any free port." }
            this.port = port
        }

        /**
         * The address to listen on: `127.0.0.1` by default (this machine only). Any other address (`0.0.0.0` for
         * every interface) needs a [token].
         */
        public fun host(host: String): Builder = apply {
            require(host.isNotBlank()) { "The host is blank; pass an address such as 127.0.0.1 or 0.0.0.0." }
            this.host = host
        }

        /**
         * A secret every request must carry (header `Authorization: Bearer <token>`, or `?token=` once, which sets a
         * cookie for the pages); requests without it get 401.
         */
        public fun token(token: String): Builder = apply {
            require(token.length >= 8) { "A studio token needs at least 8 characters; use a long random one." }
            this.token = token
        }

        /** Who the studio's runs are owned by in the store's leases; a unique id per process by default. */
        public fun owner(owner: String): Builder = apply {
            require(owner.isNotBlank()) { "The owner is blank; pass an id unique to this process." }
            this.owner = owner
        }

        /**
         * Shows the fleet's view of runs beside the store's (artifact `trellis-fleet-postgres`): for each run its
         * queue row — queue status, worker, attempts, claim and heartbeat times, lost claims — and on the runs page
         * the counts by graph and the claims lost now. The studio only reads the fleet's tables, through [client]'s
         * read calls: it never creates them nor writes a row. Usually the store is the fleet's
         * (`builder(client.store).fleet(client)`).
         */
        public fun fleet(client: FleetClient): Builder = apply { fleet = client }

        /**
         * Starts the server and returns the running studio.
         * @throws IllegalArgumentException when [host] is not the loopback address and no [token] is set.
         */
        public fun start(): TrellisStudio {
            require(token != null || isLoopback(host)) {
                "Trellis Studio listens on '$host', reachable from other machines, without a token; set one with " +
                    ".token(...) (requests without it get 401), or keep the default host 127.0.0.1."
            }
            return TrellisStudio(Studio.start(store, graphs, host, port, token, owner, fleet))
        }

        private fun isLoopback(host: String) = host == LOOPBACK || host == "localhost" || host == "::1"
    }

    /** Factories. */
    public companion object {
        private const val LOOPBACK = "127.0.0.1"

        /** Starts a studio over [store] on [port] (any free one by default), on this machine only, with [graphs]. */
        @JvmStatic
        @JvmOverloads
        public fun start(store: CheckpointStore, port: Int = 0, graphs: List<Graph> = emptyList()): TrellisStudio =
            builder(store).port(port).graphs(graphs).start()

        /** A [Builder] over [store]. */
        @JvmStatic
        public fun builder(store: CheckpointStore): Builder = Builder(store)
    }
}
