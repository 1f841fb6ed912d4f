package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import kotlinx.coroutines.runBlocking
import org.postgresql.ds.PGSimpleDataSource
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.nio.file.Files
import java.nio.file.Path
import java.sql.Connection
import java.time.Duration
import javax.sql.DataSource
import kotlin.system.exitProcess

/**
 * A worker that freezes inside a PostgreSQL transaction: it claims run `args[2]` (a 1 s lease), then renews it and,
 * with the run's row locked by the renewal, writes `args[3]` ("in-transaction") and waits before committing — the
 * parent then stops it with SIGSTOP. When it is let go (SIGCONT), it prints how the renewal ended and exits.
 * Args: JDBC URL, schema, run id, marker file.
 */
object FrozenWorkerChild {
    @Volatile
    private var freezeOnCommit = false

    @JvmStatic
    fun main(args: Array<String>) {
        val (url, schema, runId, marker) = args
        val real = PGSimpleDataSource().apply { setURL(url) }
        val freezing = Proxy.newProxyInstance(
            DataSource::class.java.classLoader,
            arrayOf(DataSource::class.java),
        ) { _, method, methodArgs ->
            val result = call(real, method, methodArgs)
            if (method.name == "getConnection") freezeBeforeCommit(result as Connection, Path.of(marker)) else result
        } as DataSource
        val store =
            PostgresCheckpointStore(
                freezing,
                schema,
                leaseDuration = Duration.ofSeconds(1),
                lockTimeout = Duration.ofSeconds(2),
            )
        val outcome = runBlocking {
            val lease = store.claim(runId, "frozen-worker")
            freezeOnCommit = true
            runCatching { store.renew(lease) }
        }
        println("renewal: " + outcome.fold({ "renewed" }, { "failed: ${it.javaClass.simpleName}: ${it.message}" }))
        exitProcess(0)
    }

    private fun call(target: Any, method: java.lang.reflect.Method, args: Array<Any?>?): Any? = try {
        method.invoke(target, *(args ?: emptyArray()))
    } catch (e: InvocationTargetException) {
        throw e.targetException
    }

    private fun freezeBeforeCommit(connection: Connection, marker: Path): Connection = Proxy.newProxyInstance(
        Connection::class.java.classLoader,
        arrayOf(Connection::class.java),
    ) { _, method, args ->
        if (method.name == "commit" && freezeOnCommit) {
            freezeOnCommit = false
            Files.writeString(marker, "in-transaction")
            Thread.sleep(30_000) // the parent stops this process meanwhile; it commits when let go
        }
        call(connection, method, args)
    } as Connection
}
