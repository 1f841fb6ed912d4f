package dev.trellis.samples

import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldEndWith
import io.kotest.matchers.string.shouldStartWith
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * Which build `./trellis-samples` runs before starting the jar (its dry run, TRELLIS_SAMPLES_DRY_RUN=1), in a copy of
 * the script in a small tree of files with chosen modification times: nothing when the jar is current, the samples
 * module alone when only files under samples/ changed, the samples and their modules otherwise.
 */
class TrellisSamplesScriptTest {
    @TempDir
    lateinit var dir: Path

    private lateinit var root: File
    private val old = System.currentTimeMillis() - 3_600_000
    private val built = old + 60_000
    private val later = built + 60_000

    private fun file(path: String, modified: Long): File = File(root, path).apply {
        parentFile.mkdirs()
        writeText(path)
        setLastModified(modified)
    }

    private fun tree() {
        root = dir.toFile()
        val script = File("../trellis-samples").readText()
        file("trellis-samples", old).apply { writeText(script) }.setExecutable(true)
        for (path in listOf(
            "pom.xml",
            "samples/pom.xml",
            "samples/src/main/kotlin/dev/trellis/samples/BasicsSample.kt",
            "graph-runtime/pom.xml",
            "graph-runtime/src/main/kotlin/dev/trellis/runtime/Run.kt",
            "graph-runtime/src/test/kotlin/dev/trellis/runtime/RunTest.kt",
            "bench/src/main/java/Bench.java",
        )) {
            file(path, old)
        }
        file("samples/target/trellis-samples.jar", built)
        file("target/samples-repo/.trellis-samples-upstream", built)
    }

    private fun plan(): String {
        val process = ProcessBuilder("bash", File(root, "trellis-samples").path, "--list")
            .apply { environment()["TRELLIS_SAMPLES_DRY_RUN"] = "1" }
            .redirectErrorStream(true)
            .start()
        check(process.waitFor(1, TimeUnit.MINUTES))
        val output = process.inputStream.bufferedReader().readText().trim()
        process.exitValue() shouldBe 0
        return output.lines().last()
    }

    @Test
    fun `a current jar is started without a build`() {
        tree()
        plan() shouldBe "up to date"
        file("graph-runtime/src/test/kotlin/dev/trellis/runtime/RunTest.kt", later) // tests are not in the jar
        file("bench/src/main/java/Bench.java", later) // nor is the bench
        plan() shouldBe "up to date"
    }

    @Test
    fun `a change under samples alone rebuilds the samples module only`() {
        tree()
        file("samples/src/main/kotlin/dev/trellis/samples/BasicsSample.kt", later)
        val plan = plan()
        plan shouldStartWith "build samples:"
        plan shouldEndWith "-pl samples package"
        plan.contains("-Dmaven.repo.local=${root.canonicalPath}/target/samples-repo") shouldBe true
    }

    @Test
    fun `a change in another module rebuilds the samples and the modules they use`() {
        tree()
        file("samples/src/main/kotlin/dev/trellis/samples/BasicsSample.kt", later)
        file("graph-runtime/src/main/kotlin/dev/trellis/runtime/Run.kt", later)
        plan() shouldEndWith "-pl samples -am install"
    }

    @Test
    fun `a changed root pom, a missing jar or a missing module repository means a full build`() {
        tree()
        file("pom.xml", later)
        plan() shouldEndWith "-pl samples -am install"

        file("pom.xml", old)
        file("samples/pom.xml", later)
        File(root, "target/samples-repo/.trellis-samples-upstream").delete()
        plan() shouldEndWith "-pl samples -am install"

        File(root, "samples/target/trellis-samples.jar").delete()
        plan() shouldEndWith "-pl samples -am install"
    }
}
