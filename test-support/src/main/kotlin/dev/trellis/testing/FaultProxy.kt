package dev.trellis.testing

import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.random.Random

/**
 * A TCP proxy owned by a test, between a client (a store, a fleet worker) and a server (PostgreSQL on
 * 127.0.0.1:5432 by default), that breaks connections the way networks, failovers and restarts do: it listens on an
 * ephemeral loopback port ([port]) and forwards every connection to [target], and can
 * - [cut] a connection: close both sides (the client sees the connection end),
 * - [reset] one: close both sides with a TCP reset (`SO_LINGER` 0: the client sees "connection reset"),
 * - [stall] one: stop forwarding both ways for a while, then go on,
 * - do so [at random moments][startChaos] (a seeded [Random] picks the fault, the connection and the pause), and
 * - [trip] on what a client sends: when bytes containing a marker (e.g. `COMMIT`) are forwarded, run an action on that
 *   connection — cut it before the server's answer reaches the client (a lost acknowledgement), or call back while
 *   the answer is held.
 *
 * No database is mocked: the server does everything it does for a direct client. For tests only.
 *
 * ```kotlin
 * FaultProxy(seed = 7).use { proxy ->
 *     val url = "jdbc:postgresql://127.0.0.1:${proxy.port}/test?user=postgres"
 *     proxy.startChaos(meanPause = Duration.ofMillis(200))
 *     // … run against url …
 * }
 * ```
 */
public class FaultProxy @JvmOverloads constructor(
    seed: Long,
    private val target: InetSocketAddress = InetSocketAddress("127.0.0.1", 5432),
) : AutoCloseable {
    private val random = Random(seed)
    private val server = ServerSocket(0, BACKLOG, InetAddress.getLoopbackAddress())
    private val links = ConcurrentHashMap.newKeySet<Link>()
    private val trips = AtomicReference<List<Trip>>(emptyList())
    private val counts = ConcurrentHashMap<String, AtomicInteger>()

    @Volatile
    private var closed = false

    @Volatile
    private var chaos: Thread? = null

    // Set before the chaos thread starts (its loop must not read `chaos` before the assignment lands).
    @Volatile private var chaosOn = false

    /** The loopback port the proxy listens on. */
    public val port: Int = server.localPort

    init {
        daemon("fault-proxy-accept") {
            while (!closed) {
                val client = try {
                    server.accept()
                } catch (_: IOException) {
                    break
                }
                try {
                    val upstream = Socket()
                    upstream.connect(target, CONNECT_MILLIS)
                    Link(client, upstream).start()
                } catch (_: IOException) {
                    client.close()
                }
            }
        }
    }

    /** How many faults of each kind (`cut`, `reset`, `stall`, `trip`) the proxy caused so far. */
    public fun faults(): Map<String, Int> = counts.mapValues { it.value.get() }

    /** How many connections are open through the proxy now. */
    public val openConnections: Int get() = links.size

    /** Closes every open connection (both sides). */
    public fun cut(): Unit = links.forEach { it.cut(reset = false) }

    /** Resets every open connection (both sides, with a TCP reset). */
    public fun reset(): Unit = links.forEach { it.cut(reset = true) }

    /** Stops forwarding on every open connection for [duration], both ways; connections opened meanwhile flow. */
    public fun stall(duration: Duration): Unit = links.forEach { it.stall(duration) }

    /**
     * Breaks connections at random moments until [stopChaos]: after a pause of up to twice [meanPause], picks an
     * open connection and cuts it, resets it, or stalls it for up to [maxStall] (by [Random] of the seed). Faults
     * land wherever the connection is: in a query, between statements, inside a commit, after a commit before its
     * answer.
     */
    @JvmOverloads
    public fun startChaos(meanPause: Duration, maxStall: Duration = Duration.ofMillis(1_500)) {
        check(chaos == null) { "Chaos already started; stopChaos() first." }
        chaosOn = true
        chaos = daemon("fault-proxy-chaos") {
            try {
                while (!closed && chaosOn) {
                    val (pause, pick, kind, stallMillis) = synchronized(random) {
                        listOf(
                            random.nextLong(meanPause.toMillis() * 2 + 1),
                            random.nextLong(Long.MAX_VALUE),
                            random.nextLong(3),
                            random.nextLong(maxStall.toMillis() + 1),
                        )
                    }
                    Thread.sleep(pause)
                    val open = links.toList()
                    if (open.isEmpty()) continue
                    val link = open[(pick % open.size).toInt()]
                    when (kind) {
                        0L -> link.cut(reset = false)
                        1L -> link.cut(reset = true)
                        else -> link.stall(Duration.ofMillis(stallMillis))
                    }
                }
            } catch (_: InterruptedException) {
                // stopped
            }
        }
    }

    /** Stops the faults [startChaos] began; connections open now go on. */
    public fun stopChaos() {
        val thread = chaos ?: return
        chaosOn = false
        chaos = null
        thread.interrupt()
        thread.join()
    }

    /**
     * The next time a client sends bytes containing [marker] (once, on whichever connection), forwards them to the
     * server and then does [action] on that connection; see [TripAction].
     */
    public fun trip(marker: String, action: TripAction) {
        trips.updateAndGet { it + Trip(marker.toByteArray(), action) }
    }

    /** Whether every [trip] armed so far has fired. */
    public val tripsFired: Boolean get() = trips.get().isEmpty()

    /** What a [trip] does to its connection once the client's marked bytes were forwarded to the server. */
    public sealed class TripAction {
        /**
         * Drops the server's next answer and closes the connection (a TCP reset when [reset]): the server did what
         * it was asked (a `COMMIT` commits), but the client never hears it — a lost acknowledgement.
         */
        public class LoseAnswer(public val reset: Boolean = false) : TripAction()

        /**
         * Drops the server's next answer, then calls [then] (on the proxy's thread, the connection held meanwhile),
         * then forwards whatever the server sends next — e.g. after `pg_terminate_backend` the FATAL error `57P01`.
         */
        public class HoldAnswer(public val then: () -> Unit) : TripAction()

        /**
         * Holds the marked bytes back, calls [first] (e.g. to terminate the server's backend), then forwards them:
         * the server is killed before it sees them.
         */
        public class Before(public val first: () -> Unit) : TripAction()
    }

    private class Trip(val marker: ByteArray, val action: TripAction)

    override fun close() {
        closed = true
        stopChaos()
        server.close()
        links.forEach { it.cut(reset = false) }
    }

    private fun count(kind: String) {
        counts.computeIfAbsent(kind) { AtomicInteger() }.incrementAndGet()
    }

    /** One client connection and its upstream twin, with a pump each way. */
    private inner class Link(private val client: Socket, private val upstream: Socket) {
        @Volatile
        private var stalledUntil = 0L

        @Volatile
        private var answer: TripAction? = null
        private val gone = AtomicInteger()

        fun start() {
            links += this
            client.tcpNoDelay = true
            upstream.tcpNoDelay = true
            daemon("fault-proxy-up") { pump(client.getInputStream(), upstream.getOutputStream(), fromClient = true) }
            daemon("fault-proxy-down") { pump(upstream.getInputStream(), client.getOutputStream(), fromClient = false) }
        }

        fun stall(duration: Duration) {
            stalledUntil = System.nanoTime() + duration.toNanos()
            count("stall")
        }

        fun cut(reset: Boolean) {
            if (gone.getAndIncrement() > 0) return
            links -= this
            if (!closed) count(if (reset) "reset" else "cut")
            for (socket in listOf(client, upstream)) {
                try {
                    if (reset) socket.setSoLinger(true, 0)
                    socket.close()
                } catch (_: IOException) {
                    // closed already
                }
            }
        }

        private fun pump(input: InputStream, output: OutputStream, fromClient: Boolean) {
            val buffer = ByteArray(BUFFER)
            try {
                while (true) {
                    val n = input.read(buffer)
                    if (n < 0) break
                    waitOutStall()
                    if (fromClient) {
                        val trip = takeTrip(buffer, n)
                        if (trip is TripAction.Before) {
                            count("trip")
                            trip.first()
                        }
                        output.write(buffer, 0, n)
                        output.flush()
                        if (trip != null && trip !is TripAction.Before) {
                            count("trip")
                            answer = trip
                        }
                    } else {
                        when (val held = answer) {
                            is TripAction.LoseAnswer -> {
                                answer = null
                                cut(held.reset)
                                break
                            }
                            is TripAction.HoldAnswer -> {
                                answer = null
                                held.then()
                            }
                            else -> {
                                output.write(buffer, 0, n)
                                output.flush()
                            }
                        }
                    }
                }
            } catch (_: IOException) {
                // one side closed or reset: close the other
            } catch (_: InterruptedException) {
                // closing
            }
            cut(reset = false)
        }

        private fun waitOutStall() {
            while (true) {
                val left = stalledUntil - System.nanoTime()
                if (left <= 0) return
                Thread.sleep(left / 1_000_000 + 1)
            }
        }

        private fun takeTrip(buffer: ByteArray, n: Int): TripAction? {
            while (true) {
                val armed = trips.get()
                val hit = armed.firstOrNull { contains(buffer, n, it.marker) } ?: return null
                if (trips.compareAndSet(armed, armed - hit)) return hit.action
            }
        }
    }

    private companion object {
        const val BACKLOG = 256
        const val BUFFER = 16 * 1024
        const val CONNECT_MILLIS = 10_000

        fun daemon(name: String, body: () -> Unit): Thread =
            Thread(body, name).apply {
                isDaemon = true
                start()
            }

        fun contains(buffer: ByteArray, n: Int, marker: ByteArray): Boolean {
            outer@ for (i in 0..n - marker.size) {
                for (j in marker.indices) if (buffer[i + j] != marker[j]) continue@outer
                return true
            }
            return false
        }
    }
}
