package dev.trellis.checkpoint.postgres

import java.io.FilterInputStream
import java.io.FilterOutputStream
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.Socket
import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger
import javax.net.SocketFactory

/**
 * A socket factory for pgjdbc (`socketFactory=` this class's name) whose sockets count round trips: a round trip is
 * a burst of writes that follows a read (the client sent requests after the server answered), which is how many times
 * the client waited for the server. The figures are JVM-wide: a test counts on one connection at a time.
 */
class CountingSockets : SocketFactory() {
    override fun createSocket(): Socket = CountingSocket()

    override fun createSocket(host: String, port: Int): Socket = unsupported()

    override fun createSocket(host: String, port: Int, localHost: InetAddress, localPort: Int): Socket = unsupported()

    override fun createSocket(host: InetAddress, port: Int): Socket = unsupported()

    override fun createSocket(address: InetAddress, port: Int, localAddress: InetAddress, localPort: Int): Socket =
        unsupported()

    private fun unsupported(): Nothing = throw UnsupportedOperationException("pgjdbc creates an unconnected socket")

    private class CountingSocket : Socket() {
        @Volatile
        private var answered = true

        private val input by lazy {
            object : FilterInputStream(super.getInputStream()) {
                override fun read(): Int = super.read().also { answered = true }

                override fun read(b: ByteArray, off: Int, len: Int): Int = super.read(b, off, len).also {
                    answered =
                        true
                }
            }
        }

        private val output by lazy {
            object : FilterOutputStream(super.getOutputStream()) {
                override fun write(b: Int) {
                    sending()
                    out.write(b)
                }

                override fun write(b: ByteArray, off: Int, len: Int) {
                    sending()
                    out.write(b, off, len)
                }
            }
        }

        private fun sending() {
            if (answered) {
                answered = false
                trips.incrementAndGet()
                senders += Thread.currentThread().name
            }
        }

        override fun getInputStream(): InputStream = input

        override fun getOutputStream(): OutputStream = output
    }

    companion object {
        private val trips = AtomicInteger()
        private val senders: MutableList<String> = Collections.synchronizedList(mutableListOf())

        /** Round trips since the last [reset]. */
        val roundTrips: Int get() = trips.get()

        /** The threads that sent the round trips since the last [reset], each named once. */
        fun threads(): List<String> = synchronized(senders) { senders.distinct() }

        fun reset() {
            trips.set(0)
            senders.clear()
        }
    }
}
