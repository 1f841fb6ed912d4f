package dev.trellis.fleet

import java.time.Duration
import kotlin.system.exitProcess

/**
 * A worker JVM of [FleetBenchmark]: `BenchChild <schema> <workerId> <concurrency> <synchronousCommit>`; stops when its
 * standard input closes.
 */
object BenchChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (schema, workerId, concurrency, sync) = args
        val pool = TestGraphs.pool(minOf(concurrency.toInt() + 4, 16), sync.toBoolean())
        val worker = FleetWorker(
            pool,
            FleetWorkerOptions(
                schema = schema,
                workerId = workerId,
                concurrency = concurrency.toInt(),
                leaseDuration = Duration.ofSeconds(30),
            ),
        ).register(BenchGraph.build(), 1).start()
        println("READY")
        System.out.flush()
        while (System.`in`.read() != -1) {
            // until the parent closes our standard input
        }
        worker.shutdown(Duration.ofSeconds(10))
        pool.close()
        val cpu = ProcessHandle.current().info().totalCpuDuration().map { it.toMillis() }.orElse(-1L)
        println("CPU $cpu")
        System.out.flush()
        exitProcess(0)
    }
}
