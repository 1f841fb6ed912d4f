package dev.trellis.samples

import com.github.ajalt.clikt.core.CliktCommand
import com.github.ajalt.clikt.core.Context
import com.github.ajalt.clikt.parameters.options.default
import com.github.ajalt.clikt.parameters.options.flag
import com.github.ajalt.clikt.parameters.options.option
import com.github.ajalt.clikt.parameters.types.int
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.fleet.FleetClient
import dev.trellis.studio.TrellisStudio
import kotlinx.coroutines.runBlocking
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.CountDownLatch

/**
 * `trellis-samples studio [--store FILE|URL] [--port N] [--no-samples] [--once]`: runs the samples with their
 * checkpoints in a store (a new SQLite file by default), then opens Trellis Studio on it and prints its URL; it stays up
 * until Ctrl-C (`--once`: checks that the runs page answers, then stops — for tests). Over PostgreSQL, when the
 * fleet's tables are in the schema, the studio shows the fleet's queue too.
 */
internal class StudioCommand : CliktCommand(name = "studio") {
    private val storeOption by option(
        "--store",
        metavar = "FILE|URL",
        help = "An existing SQLite file or a PostgreSQL JDBC URL (jdbc:postgresql://…) to open; default: a new " +
            "SQLite file in the temp directory.",
    )
    private val schema by option(
        "--schema",
        help = "The PostgreSQL schema of the checkpoint tables.",
    ).default("trellis")
    private val port by option("--port", help = "The port to listen on (0: any free port).").int().default(0)
    private val noSamples by option("--no-samples", help = "Do not run the samples; only open the store.").flag()
    private val once by option("--once", help = "Check that the runs page answers, then stop (for tests).").flag()

    override fun help(context: Context): String =
        "Runs the samples into a checkpoint store and opens Trellis Studio on their runs (http://127.0.0.1:PORT/)."

    /** The fleet's client, when the store is PostgreSQL and the fleet's tables are in its schema. */
    private var fleet: FleetClient? = null

    override fun run() {
        val store = openStore()
        store.use {
            val context = SampleContext(store = store)
            if (!noSamples) {
                runBlocking {
                    for (sample in STUDIO_SAMPLES.mapNotNull(Samples::named)) {
                        echo("Running sample '${sample.name}'…")
                        sample.run(context) { }
                    }
                }
            }
            val builder = TrellisStudio.builder(store).port(port).graphs(context.graphs.values)
            fleet?.let {
                echo("Fleet tables found in schema ${it.schema}: the studio shows the fleet's queue too")
                builder.fleet(it)
            }
            val studio = builder.start()
            studio.use {
                echo("Trellis Studio at ${studio.url} (Ctrl-C to stop)")
                if (once) {
                    val page = HttpClient.newHttpClient().send(
                        HttpRequest.newBuilder(URI.create(studio.url.substringBefore('?') + "api/v1/runs")).build(),
                        HttpResponse.BodyHandlers.ofString(),
                    )
                    check(page.statusCode() == 200) { "The runs page answered ${page.statusCode()}: ${page.body()}" }
                    echo("Runs page OK: ${page.body().split("\"runId\"").size - 1} run(s)")
                    return
                }
                val stop = CountDownLatch(1)
                Runtime.getRuntime().addShutdownHook(Thread { stop.countDown() })
                stop.await()
            }
        }
    }

    private fun openStore(): CheckpointStore {
        val given = storeOption
        return when {
            given == null -> {
                val file = Files.createTempFile("trellis-studio-", ".db")
                echo("Checkpoints in $file")
                SqliteCheckpointStore(file)
            }
            given.startsWith("jdbc:postgresql:") -> {
                val pool = FleetSample.pool(given, 4)
                val client = FleetClient(pool, schema)
                if (runBlocking { client.hasQueue() }) fleet = client
                client.store
            }
            else -> {
                val file = Path.of(given)
                require(noSamples || Files.exists(file.toAbsolutePath().parent)) { "No directory for $file." }
                require(!noSamples || Files.exists(file)) {
                    "No SQLite file $file: with --no-samples the studio opens an existing store; check the path, or " +
                        "drop --no-samples to run the samples into a new file there."
                }
                SqliteCheckpointStore(file)
            }
        }
    }

    private companion object {
        /** The samples the studio command runs: those that need no network and no answers. */
        val STUDIO_SAMPLES = listOf("basics", "routing", "fanout", "mapreduce", "research")
    }
}
