package dev.trellis.temporal

import io.temporal.client.WorkflowClient
import io.temporal.serviceclient.WorkflowServiceStubs
import io.temporal.serviceclient.WorkflowServiceStubsOptions
import io.temporal.worker.WorkerFactory
import org.postgresql.ds.PGSimpleDataSource
import java.nio.file.Path

/**
 * A Temporal worker in a JVM of its own for `PostgresLiveEventsTest`: it connects to the test server at
 * `127.0.0.1:<port>`, runs [CrossJvmGraph] on the task queue, and publishes the runs' events to the PostgreSQL table
 * — each event twice (a side channel that repeats). Runs until killed.
 *
 * Arguments: port, task queue, JDBC URL, table, release file.
 */
object LiveWorkerChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (port, queue, url, table, release) = args
        val data = PGSimpleDataSource().apply { setURL(url) }
        val postgres = PostgresLiveEvents(data, table)
        val repeating = object : LiveEvents by postgres {
            override fun publish(event: LiveEvent) {
                postgres.publish(event)
                postgres.publish(event)
            }
        }
        val stubs = WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:$port").build(),
        )
        val factory = WorkerFactory.newInstance(WorkflowClient.newInstance(stubs))
        TemporalWorkers.register(
            factory.newWorker(queue),
            listOf(CrossJvmGraph.graph(Path.of(release))),
            TemporalOptions(liveEvents = repeating),
        )
        factory.start()
        println("worker ready on $queue")
        Thread.currentThread().join()
    }
}
