package dev.trellis.fleet

import java.time.Duration
import kotlin.system.exitProcess

/**
 * A worker JVM of the fleet test: `FleetChild <schema> <workerId> <concurrency> <leaseMillis>`. Prints `READY`, then
 * one line per claim, recorded end, lost claim and problem; shuts down (draining) when its standard input closes.
 */
object FleetChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (schema, workerId, concurrency, leaseMillis) = args
        val pool = TestGraphs.pool(concurrency.toInt() * 2 + 4)
        val out = System.out
        val observer = object : FleetObserver {
            override fun claimed(runId: String, attempt: Int) = line("CLAIM $runId $attempt")

            override fun finished(runId: String, attempt: Int, status: FleetStatus) = line(
                "FINISH $runId $attempt $status",
            )

            override fun lost(runId: String, attempt: Int) = line("LOST $runId $attempt")

            override fun problem(error: Throwable) = line("PROBLEM ${error.toString().replace('\n', ' ')}")

            private fun line(text: String) {
                synchronized(out) {
                    out.println(text)
                    out.flush()
                }
            }
        }
        val worker = FleetWorker(
            pool,
            FleetWorkerOptions(
                schema = schema,
                workerId = workerId,
                concurrency = concurrency.toInt(),
                leaseDuration = Duration.ofMillis(leaseMillis.toLong()),
                pollInterval = Duration.ofMillis(250),
                observer = observer,
            ),
        ).register(ChainGraph.build(pool, schema, stepMillis = 1), 1).start()
        synchronized(out) {
            out.println("READY")
            out.flush()
        }
        while (System.`in`.read() != -1) {
            // Keep running until the parent closes our standard input.
        }
        worker.shutdown(Duration.ofSeconds(20))
        pool.close()
        exitProcess(0)
    }
}
