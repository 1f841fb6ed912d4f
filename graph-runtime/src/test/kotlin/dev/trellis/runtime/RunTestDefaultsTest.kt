package dev.trellis.runtime

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.UnconfinedTestDispatcher
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Path
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.ZoneOffset
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import kotlin.coroutines.ContinuationInterceptor
import kotlin.time.Duration.Companion.hours
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TestTimeSource

/**
 * `docs/testing.md`: a run under `runTest` whose options leave dispatcher, time source and clock at their defaults
 * runs its nodes on the caller's test dispatcher, in its virtual time, and stamps events with that virtual time.
 */
@OptIn(ExperimentalCoroutinesApi::class)
class RunTestDefaultsTest {
    object S : StateSchema("run-test-defaults") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** Where each node body ran, by node id. */
    private val dispatchers = ConcurrentHashMap<String, Any>()

    /** s -> a (waits an hour), s -> b (waits a second) -> join. */
    private fun slow(): Graph = graph("slow", S) {
        suspend fun seen(id: String) {
            dispatchers[id] = currentCoroutineContext()[ContinuationInterceptor]!!
        }
        val s = node("s") { seen("s") }
        val a = node("a") {
            seen("a")
            delay(1.hours)
            set(S.log, listOf("a"))
        }
        val b = node("b") {
            seen("b")
            delay(1.seconds)
            set(S.log, listOf("b"))
        }
        val join = node("join") { seen("join") }
        start(s)
        s then a
        s then b
        a then join
        b then join
    }

    @Test
    fun `invoke under runTest runs in the caller's virtual time, on its dispatcher`() = runTest {
        val caller = currentCoroutineContext()[ContinuationInterceptor]
        val result = slow().invoke()
        result.status shouldBe Status.COMPLETED
        result.duration shouldBe Duration.ofHours(1)
        result.node("a").duration shouldBe Duration.ofHours(1)
        result.node("b").duration shouldBe Duration.ofSeconds(1)
        result.state[S.log] shouldBe listOf("b", "a")
        testScheduler.currentTime shouldBe 3_600_000
        withClue("dispatchers of the node bodies: $dispatchers") {
            dispatchers.values.all { it === caller } shouldBe
                true
        }
    }

    @Test
    fun `events under runTest are stamped with virtual time from the epoch`() = runTest {
        val run = slow().record()
        run.events.first().timestamp shouldBe Instant.EPOCH
        run.all<RunEvent.NodeCompleted>().map { it.nodeId to it.timestamp.toEpochMilli() } shouldContainExactly
            listOf("s" to 0L, "b" to 1_000L, "a" to 3_600_000L, "join" to 3_600_000L)
        run.events.last().shouldBeInstanceOf<RunEvent.RunCompleted>().timestamp shouldBe Instant.ofEpochMilli(3_600_000)
    }

    @Test
    fun `start and an unconfined test dispatcher pick it up too`() = runTest(UnconfinedTestDispatcher()) {
        val caller = currentCoroutineContext()[ContinuationInterceptor]
        val events = ArrayList<RunEvent>()
        val handle = slow().start(this) { events += it }
        handle.await().duration shouldBe Duration.ofHours(1)
        events.last().timestamp shouldBe Instant.ofEpochMilli(3_600_000)
        dispatchers.values.all { it === caller } shouldBe true
    }

    @Test
    fun `a test dispatcher passed without a time source brings its virtual time`() = runTest {
        val nodes = StandardTestDispatcher(testScheduler)
        val result = slow().invoke(options = RunOptions(dispatcher = nodes))
        result.node("a").duration shouldBe Duration.ofHours(1)
        dispatchers.values.all { it === nodes } shouldBe true
    }

    @Test
    fun `options set explicitly are kept`() = runTest {
        val clock = Clock.fixed(Instant.parse("2030-01-01T00:00:00Z"), ZoneOffset.UTC)
        val timeSource = TestTimeSource()
        val run = slow().record(options = RunOptions(clock = clock, timeSource = timeSource))
        run.events.map { it.timestamp }.toSet() shouldBe setOf(clock.instant())
        run.result.duration shouldBe Duration.ZERO // the given time source never moved
        run.result.node("a").status shouldBe Status.COMPLETED
    }

    @Test
    fun `nodes on a real dispatcher run in real time, also under runTest`() = runTest {
        val g = graph("real", S) {
            val a = node("a") { dispatchers["a"] = currentCoroutineContext()[ContinuationInterceptor]!! }
            start(a)
        }
        val run = g.record(options = RunOptions(dispatcher = Dispatchers.Default))
        dispatchers["a"] shouldBe Dispatchers.Default
        (run.events.first().timestamp.toEpochMilli() > Instant.parse("2020-01-01T00:00:00Z").toEpochMilli()) shouldBe
            true
    }

    @Test
    fun `a checkpointed run under runTest keeps real time for its checkpoints and lease`() = runTest {
        val store = InMemoryCheckpointStore()
        val run = slow().record(options = RunOptions(runId = "virtual-1", checkpointing = Checkpointing(store)))
        run.result.status shouldBe Status.COMPLETED
        run.all<RunEvent.CheckpointSaved>().last().timestamp shouldBe Instant.ofEpochMilli(3_600_000)
        // The store judges leases by its own (real) clock, so checkpoint times stay on RunOptions.clock.
        store.history("virtual-1").last().createdAt shouldNotBe Instant.ofEpochMilli(3_600_000)
        (store.history("virtual-1").last().createdAt.isAfter(Instant.parse("2020-01-01T00:00:00Z"))) shouldBe true
    }

    @Test
    fun `the runtime works without kotlinx-coroutines-test on the class path`() {
        // The library is an optional dependency: a user who does not test with runTest does not have it.
        val classPath = System.getProperty("java.class.path").split(File.pathSeparator)
        val without = classPath.filterNot { File(it).name.startsWith("kotlinx-coroutines-test") }
        withClue("the test class path holds the library: $classPath") { without.size shouldBe classPath.size - 1 }
        val java = Path.of(System.getProperty("java.home"), "bin", "java").toString()
        val process = ProcessBuilder(
            java,
            "-Xmx128m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            without.joinToString(File.pathSeparator),
            NoTestLibraryChild::class.java.name,
        )
            .redirectErrorStream(true)
            .start()
        val output = process.inputStream.bufferedReader().readText()
        withClue("the child ends within 60 s") { process.waitFor(60, TimeUnit.SECONDS) shouldBe true }
        withClue(output) { process.exitValue() shouldBe 0 }
        output.trim().lines().last() shouldBe "COMPLETED [a, b] events=10"
    }
}

/** Runs a graph in a JVM without kotlinx-coroutines-test (see [RunTestDefaultsTest]). */
object NoTestLibraryChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val absent = runCatching { Class.forName("kotlinx.coroutines.test.TestDispatcher") }.isFailure
        check(absent) { "kotlinx-coroutines-test is on the class path" }
        val g = graph("plain", RunTestDefaultsTest.S) {
            val s = node("s") { }
            val a = node("a") {
                delay(20)
                set(RunTestDefaultsTest.S.log, listOf("a"))
            }
            val b = node("b") { set(RunTestDefaultsTest.S.log, listOf("b")) }
            start(s)
            s then a
            s then b
        }
        runBlocking {
            val result = g.invoke()
            val events = g.events().toList()
            println("${result.status} ${result.state[RunTestDefaultsTest.S.log].sorted()} events=${events.size}")
        }
    }
}
