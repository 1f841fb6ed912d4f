package dev.trellis.fleet

import java.io.File
import java.time.Duration
import javax.sql.DataSource
import kotlin.system.exitProcess

/**
 * A worker JVM of [FleetBenchmark]: `BenchChild <schema> <workerId> <concurrency> <synchronousCommit> <groupCommit>`;
 * stops when its standard input closes, then prints its own CPU time and that of its PostgreSQL sessions.
 */
object BenchChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (schema, workerId, concurrency, sync) = args
        val groupCommit = args.getOrNull(4)?.toBoolean() ?: true
        val name = "fleet-bench-$schema-$workerId"
        val pool = TestGraphs.pool(minOf(concurrency.toInt() + 4, 16), sync.toBoolean(), name)
        val worker = FleetWorker(
            pool,
            FleetWorkerOptions(
                schema = schema,
                workerId = workerId,
                concurrency = concurrency.toInt(),
                leaseDuration = Duration.ofSeconds(30),
                groupCommit = groupCommit,
            ),
        ).register(BenchGraph.build(), 1).start()
        println("READY")
        System.out.flush()
        while (System.`in`.read() != -1) {
            // until the parent closes our standard input
        }
        worker.shutdown(Duration.ofSeconds(10))
        val backendCpu = backendCpuMillis(pool, name)
        pool.close()
        val cpu = ProcessHandle.current().info().totalCpuDuration().map { it.toMillis() }.orElse(-1L)
        println("CPU $cpu")
        println("PGCPU $backendCpu")
        System.out.flush()
        exitProcess(0)
    }

    /**
     * The CPU time so far of the PostgreSQL backends serving the sessions named [name] (user + system, from
     * `/proc/<pid>/stat`; the server runs on this host), or -1 when it cannot be read.
     */
    private fun backendCpuMillis(pool: DataSource, name: String): Long {
        val pids = pool.connection.use { c ->
            c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?").use {
                it.setString(1, name)
                it.executeQuery().use { rs -> buildList { while (rs.next()) add(rs.getInt(1)) } }
            }
        }
        var ticks = 0L
        for (pid in pids) {
            val stat = File("/proc/$pid/stat").takeIf { it.canRead() }?.readText() ?: return -1
            val fields = stat.substringAfterLast(") ").split(' ')
            ticks += fields[UTIME].toLong() + fields[STIME].toLong()
        }
        return ticks * MILLIS_PER_TICK
    }

    // Fields 14 and 15 of /proc/<pid>/stat, counted from the state (field 3) after the command name.
    private const val UTIME = 11
    private const val STIME = 12
    private const val MILLIS_PER_TICK = 10L // USER_HZ = 100 on Linux
}
