package dev.trellis.springboot

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.health.contributor.HealthIndicator
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.sqlite.SQLiteDataSource
import java.nio.file.Path
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import javax.sql.DataSource
import org.springframework.boot.health.contributor.Status as HealthStatus

object Greeting : StateSchema("greeting") {
    val person = key<String>("name")
    val text = key("text", "")
    val shout = key("shout", "")
}

/** A graph of two nodes; [hold], when set, keeps node `greet` running until it completes. */
class Greeter(private val hold: CompletableDeferred<Unit>? = null) {
    val started = CompletableDeferred<Unit>()
    val graph: Graph = graph("greeting", Greeting) {
        val greet = node("greet") {
            started.complete(Unit)
            hold?.await()
            set(Greeting.text, "Hello, ${get(Greeting.person)}!")
        }
        val shout = node("shout") { set(Greeting.shout, get(Greeting.text).uppercase()) }
        start(greet)
        greet then shout
    }
}

class TrellisAutoConfigurationTest {
    private val schema = TestPostgres.newSchema()

    private val runner = ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(TrellisAutoConfiguration::class.java))

    @AfterEach
    fun dropSchema() = TestPostgres.dropSchema(schema)

    private fun postgres(graph: Graph = Greeter().graph) = runner
        .withBean(DataSource::class.java, { TestPostgres.dataSource })
        .withBean("greeting", Graph::class.java, { graph })
        .withPropertyValues("trellis.store.schema=$schema")

    @Test
    fun `graphs as beans run with checkpoints in the application's PostgreSQL, measured and healthy`() {
        postgres().withBean(MeterRegistry::class.java, { SimpleMeterRegistry() }).run { context ->
            val runners = context.getBean(TrellisRunners::class.java)
            runners.graphs.keys shouldBe setOf("greeting")
            runners.store.toString() shouldBe "PostgresCheckpointStore(schema=$schema)"

            val result = runners.runner("greeting").invoke(mapOf("name" to "Ada"))
            result.status shouldBe Status.COMPLETED
            result.state[Greeting.shout] shouldBe "HELLO, ADA!"
            runBlocking { runners.store!!.run(result.runId)!!.latestStatus } shouldBe "COMPLETED"
            runBlocking { runners.invoke("greeting", stateOf(Greeting.person to "Bo")) }.state[Greeting.shout] shouldBe
                "HELLO, BO!"

            val registry = context.getBean(MeterRegistry::class.java)
            registry.get("trellis.runs").tags("graph", "greeting", "status", "COMPLETED").counter().count() shouldBe 2.0
            registry.get("trellis.node.duration").tags("graph", "greeting", "node", "greet", "outcome", "completed")
                .timer().count() shouldBe 2L
            registry.get("trellis.runs.active").gauge().value() shouldBe 0.0

            val health = context.getBean("trellisHealthIndicator", HealthIndicator::class.java).health()!!
            health.status shouldBe HealthStatus.UP
            health.details["store"] shouldBe "PostgresCheckpointStore(schema=$schema)"
            health.details["leasesHeld"] shouldBe 0
        }
    }

    @Test
    fun `a SQLite DataSource gets the SQLite store on its file`(
        @TempDir dir: Path,
    ) {
        val file = dir.resolve("app.db")
        runner
            .withBean(DataSource::class.java, { SQLiteDataSource().apply { url = "jdbc:sqlite:$file" } })
            .withBean("greeting", Graph::class.java, { Greeter().graph })
            .run { context ->
                val runners = context.getBean(TrellisRunners::class.java)
                runners.store.toString() shouldBe "SqliteCheckpointStore($file)"
                val result = runners.runner("greeting").invoke(mapOf("name" to "Ada"))
                runBlocking { runners.store!!.run(result.runId)!!.latestStatus } shouldBe "COMPLETED"
            }
    }

    @Test
    fun `without a DataSource runs keep checkpoints in memory, with none they keep none`() {
        runner.withBean("greeting", Graph::class.java, { Greeter().graph }).run { context ->
            context.getBean(TrellisRunners::class.java).store!!.toString() shouldContain "InMemoryCheckpointStore"
        }
        runner.withBean("greeting", Graph::class.java, { Greeter().graph })
            .withPropertyValues("trellis.store.type=none")
            .run { context ->
                val runners = context.getBean(TrellisRunners::class.java)
                runners.store shouldBe null
                runners.options.checkpointing.isPresent shouldBe false
                runners.runner("greeting").invoke(mapOf("name" to "Ada")).status shouldBe Status.COMPLETED
            }
    }

    @Test
    fun `the application's own CheckpointStore bean wins, and an unknown graph id names the graphs`() {
        val own = InMemoryCheckpointStore()
        runner.withBean(CheckpointStore::class.java, { own })
            .withBean("greeting", Graph::class.java, { Greeter().graph })
            .run { context ->
                val runners = context.getBean(TrellisRunners::class.java)
                val result = runners.runner("greeting").invoke(mapOf("name" to "Ada"))
                runBlocking { own.run(result.runId) }!!.latestStatus shouldBe "COMPLETED"
                val error = runCatching { runners.runner("greetings") }.exceptionOrNull()
                error.shouldBeInstanceOf<IllegalArgumentException>().message shouldBe
                    "No Graph bean has id 'greetings'; the graphs are [greeting]. Declare the graph as a @Bean, or " +
                    "fix the id."
            }
    }

    @Test
    fun `a DataSource of another database fails the start naming the choices`() {
        runner.withBean(DataSource::class.java, { FakeProductDataSource("H2") }).run { context ->
            val failure = context.startupFailure!!
            generateSequence(failure as Throwable) { it.cause }.last().message!! shouldContain
                "trellis.store.type=auto found a H2 DataSource"
        }
    }

    @Test
    fun `shutting the application down drains a running run, which resumes in the next one`() {
        val hold = CompletableDeferred<Unit>()
        val greeter = Greeter(hold)
        lateinit var running: CompletableFuture<RunResult>
        postgres(greeter.graph).run { context ->
            val runners = context.getBean(TrellisRunners::class.java)
            running = runners.runner("greeting").invokeAsync(stateOf(Greeting.person to "Ada"))
            runBlocking { greeter.started.await() }
            // Node greet finishes once the drain has begun; node shout must then not start.
            Thread {
                while (!runners.control.isDraining) Thread.sleep(2)
                hold.complete(Unit)
            }.start()
        } // the context closes here: the drain waits for the run to checkpoint and end
        val drained = running.get(60, TimeUnit.SECONDS)
        drained.status shouldBe Status.INTERRUPTED
        drained.state[Greeting.text] shouldBe "Hello, Ada!"
        drained.state[Greeting.shout] shouldBe ""

        postgres().run { context ->
            val resumed = context.getBean(TrellisRunners::class.java).runner("greeting").resumeAsync(drained.runId)
                .get(60, TimeUnit.SECONDS)
            resumed.status shouldBe Status.COMPLETED
            resumed.state[Greeting.shout] shouldBe "HELLO, ADA!"
        }
    }
}
