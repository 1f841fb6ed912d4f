package dev.trellis.samples

import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import org.junit.jupiter.api.Test
import java.io.File
import java.net.ServerSocket
import java.util.concurrent.TimeUnit

/**
 * The command line as a user meets it: `trellis-samples` started as a process (the main class of
 * samples/target/trellis-samples.jar, on the test class path), judged by its output and exit status.
 */
class SamplesCliTest {
    private class Run(val exitCode: Int, val stdout: String, val stderr: String) {
        val output: String get() = stdout + stderr

        override fun toString(): String = "exit $exitCode\n--- stdout\n$stdout\n--- stderr\n$stderr"
    }

    private fun samples(vararg args: String, env: Map<String, String> = emptyMap()): Run {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val command = listOf(java, "-cp", System.getProperty("java.class.path"), "dev.trellis.samples.TrellisSamples")
        val builder = ProcessBuilder(command + args)
        builder.environment().keys.removeIf { it.startsWith("OPENAI_") || it.startsWith("OTEL_") }
        builder.environment().putAll(env)
        val dir = File("target/cli-test").apply { mkdirs() }
        val out = File.createTempFile("stdout", ".txt", dir)
        val err = File.createTempFile("stderr", ".txt", dir)
        val process = builder.redirectOutput(out).redirectError(err).redirectInput(ProcessBuilder.Redirect.PIPE).start()
        process.outputStream.close()
        check(process.waitFor(5, TimeUnit.MINUTES)) { "trellis-samples ${args.joinToString(" ")} did not end" }
        return Run(process.exitValue(), out.readText(), err.readText())
    }

    /** A local port nothing listens on (taken, then released). */
    private fun closedPort(): Int = ServerSocket(0).use { it.localPort }

    @Test
    fun `a run that completes exits 0`() {
        val run = samples("basics")
        (run.exitCode to run.toString()) shouldBe (0 to run.toString())
        run.stdout shouldContain "COMPLETED"
    }

    @Test
    fun `the handoff sample runs on scripted models and shows each handoff`() {
        val run = samples("handoff")
        (run.exitCode to run.toString()) shouldBe (0 to run.toString())
        run.stdout shouldContain "triage → billing (a double charge)"
        run.stdout shouldContain "refunds made: 1"
    }

    @Test
    fun `the cancellation sample cancels on purpose and exits 0`() {
        val run = samples("cancellation")
        (run.exitCode to run.toString()) shouldBe (0 to run.toString())
        run.stdout shouldContain "CANCELLED"
    }

    @Test
    fun `a run that fails exits 1 and its error names the endpoint that failed`() {
        val port = closedPort()
        val run = samples(
            "--model",
            "openai",
            "research",
            env = mapOf(
                ResearchModels.API_KEY to "test-key",
                ResearchModels.MODEL to "test-model",
                ResearchModels.BASE_URL to "http://127.0.0.1:$port/v1",
            ),
        )
        (run.exitCode to run.toString()) shouldBe (1 to run.toString())
        run.stderr shouldContain "ended FAILED"
        run.stderr shouldContain
            "OpenAI-compatible endpoint http://127.0.0.1:$port/v1 (host 127.0.0.1, port $port) failed"
    }

    @Test
    fun `--list and --help show the fleet sample with its defaults`() {
        val list = samples("--list")
        list.exitCode shouldBe 0
        list.stdout shouldContain "fleet"
        list.stdout shouldContain
            "fleet [--workers N (default 3)] [--runs M (default 300)] " +
            "[--url JDBC-URL (default jdbc:postgresql://127.0.0.1:5432/test?user=postgres)]"
        val help = samples("--help")
        help.exitCode shouldBe 0
        help.stdout.replace(Regex("\\s+"), " ") shouldContain "trellis-samples fleet [--workers N (default 3)]"
        samples("fleet", "--help").stdout shouldContain "--workers"
    }

    @Test
    fun `fleet without a PostgreSQL server fails in one line`() {
        val url = "jdbc:postgresql://127.0.0.1:${closedPort()}/test?user=postgres"
        val run = samples("fleet", "--url", url)
        (run.exitCode to run.toString()) shouldBe (1 to run.toString())
        run.output.lines().filter { it.isNotBlank() } shouldHaveSize 1
        run.output shouldContain "cannot connect to PostgreSQL at $url"
        run.output shouldNotContain "\tat "
    }

    @Test
    fun `a sample run prints no SLF4J warning`() {
        samples("basics").stderr shouldNotContain "SLF4J"
    }
}
