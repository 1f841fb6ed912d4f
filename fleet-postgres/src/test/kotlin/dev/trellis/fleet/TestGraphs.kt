package dev.trellis.fleet

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.testing.TestPostgres
import java.time.Duration

/** Graphs and pools of the fleet's tests. */
object TestGraphs {
    object Greeting : StateSchema("greeting") {
        val person = key<String>("name")
        val greeting = key("greeting", default = "")
        val approved = key("approved", default = "")
        val ask = key("ask", default = false)
    }

    /** greet → approve (asks for approval when `ask`); version [version] greets with "Hello" or "Hi" (version 2). */
    @JvmStatic
    @JvmOverloads
    fun greeting(version: Int = 1): Graph = graph("greeting", Greeting) {
        val greet = node("greet") {
            set(Greeting.greeting, (if (version == 1) "Hello, " else "Hi, ") + get(Greeting.person))
        }
        val approve = node("approve") {
            if (get(Greeting.ask)) set(Greeting.approved, interrupt("Approve ${get(Greeting.greeting)}?"))
        }
        start(greet)
        greet then approve
    }

    /** A pool on the test database; its sessions named [applicationName] in `pg_stat_activity` when given. */
    @JvmStatic
    @JvmOverloads
    fun pool(size: Int, synchronousCommit: Boolean = true, applicationName: String? = null): HikariDataSource =
        HikariDataSource(
            HikariConfig().apply {
                dataSource = TestPostgres.dataSource
                maximumPoolSize = size
                minimumIdle = 1
                connectionTimeout = Duration.ofSeconds(30).toMillis()
                val init = listOfNotNull(
                    "SET synchronous_commit = off".takeIf { !synchronousCommit },
                    applicationName?.let { "SET application_name = '$it'" },
                )
                if (init.isNotEmpty()) connectionInitSql = init.joinToString("; ")
            },
        )

    /** Worker options for tests: the given schema, short leases and polls. */
    @JvmStatic
    fun options(schema: String, workerId: String = "test-worker"): FleetWorkerOptions = FleetWorkerOptions(
        schema = schema,
        workerId = workerId,
        concurrency = 4,
        leaseDuration = Duration.ofSeconds(5),
        pollInterval = Duration.ofMillis(200),
    )
}
