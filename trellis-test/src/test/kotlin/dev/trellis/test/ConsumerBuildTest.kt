package dev.trellis.test

import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import java.util.jar.JarOutputStream
import java.util.zip.ZipEntry
import kotlin.io.path.isDirectory
import kotlin.io.path.name

/**
 * A user's project depending on trellis-test: an eval set whose pass rate is below its threshold fails the user's
 * Maven build. Runs a small Java project with the Maven wrapper, offline, against a local repository of its own in
 * a temporary directory, seeded with this build's modules (jars made from their classes) and reading every other
 * artifact from the usual local repository without writing to it.
 */
class ConsumerBuildTest {
    @TempDir
    lateinit var dir: Path

    @Test
    fun `an eval below its threshold fails the consumer's Maven build`() {
        val root = Path.of("..").toAbsolutePath().normalize()
        val repository = dir.resolve("repository")
        seed(root, repository)
        val project = dir.resolve("consumer")
        write(project.resolve("pom.xml"), consumerPom())
        write(project.resolve("src/test/resources/evals/capitals.jsonl"), CASES)
        write(project.resolve("src/test/java/consumer/CapitalsEvalTest.java"), TEST)

        // Surefire passes the build's local repository as maven.repo.local; the usual one is read after it.
        val tail = listOfNotNull(
            System.getProperty("maven.repo.local"),
            System.getProperty("maven.repo.local.tail"),
            "${System.getProperty("user.home")}/.m2/repository",
        ).distinct().joinToString(",")
        val command = listOf(
            root.resolve("mvnw").toString(),
            "-B",
            "-ntp",
            "-o",
            "-q",
            "-f",
            project.resolve("pom.xml").toString(),
            "-Dmaven.repo.local=$repository",
            "-Dmaven.repo.local.tail=$tail",
            "test",
        )
        val log = dir.resolve("build.log").toFile()
        val process = ProcessBuilder(command).directory(project.toFile()).redirectErrorStream(true)
            .redirectOutput(log).also { it.environment().remove("MAVEN_OPTS") }.start()
        val ended = process.waitFor(10, TimeUnit.MINUTES)
        val report = project.resolve("target/surefire-reports/consumer.CapitalsEvalTest.txt").toFile()
        val output = log.readText() + (if (report.exists()) report.readText() else "")
        withClue("the consumer build's output:\n$output") {
            ended shouldBe true
            process.exitValue() shouldBe 1
            output shouldContain "dev.trellis.test.eval.EvalThresholdException"
            output shouldContain "Eval 'capitals' passed 50% of 2 cases, below the threshold of 90%."
            output shouldContain "italy: contains: missing [Rome]"
        }
    }

    /** Every module of this build that has classes, as a jar and its pom, and the parent pom. */
    private fun seed(root: Path, repository: Path) {
        install(repository, "trellis-parent", root.resolve("pom.xml"), null)
        Files.list(root).use { modules ->
            for (module in modules.filter { it.isDirectory() && Files.exists(it.resolve("pom.xml")) }) {
                val classes = module.resolve("target/classes")
                if (!Files.isDirectory(classes)) continue
                val pom = Files.readString(module.resolve("pom.xml"))
                val artifact = Regex("</parent>\\s*<artifactId>([^<]+)</artifactId>").find(pom)?.groupValues?.get(1)
                    ?: continue
                install(repository, artifact, module.resolve("pom.xml"), classes)
            }
        }
    }

    private fun install(repository: Path, artifact: String, pom: Path, classes: Path?) {
        val folder = repository.resolve("dev/trellis/$artifact/$VERSION")
        Files.createDirectories(folder)
        Files.copy(pom, folder.resolve("$artifact-$VERSION.pom"))
        if (classes != null) jar(classes, folder.resolve("$artifact-$VERSION.jar").toFile())
    }

    private fun jar(classes: Path, target: File) {
        JarOutputStream(target.outputStream()).use { out ->
            Files.walk(classes).use { paths ->
                for (path in paths.filter { Files.isRegularFile(it) }) {
                    out.putNextEntry(ZipEntry(classes.relativize(path).joinToString("/") { it.name }))
                    Files.copy(path, out)
                    out.closeEntry()
                }
            }
        }
    }

    private fun write(path: Path, text: String) {
        Files.createDirectories(path.parent)
        Files.writeString(path, text)
    }

    private fun consumerPom(): String =
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>consumer</groupId>
          <artifactId>capitals</artifactId>
          <version>1</version>
          <properties>
            <maven.compiler.release>17</maven.compiler.release>
            <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
          </properties>
          <dependencies>
            <dependency>
              <groupId>dev.trellis</groupId>
              <artifactId>trellis-test</artifactId>
              <version>$VERSION</version>
              <scope>test</scope>
            </dependency>
            <dependency>
              <groupId>org.junit.jupiter</groupId>
              <artifactId>junit-jupiter</artifactId>
              <version>${System.getProperty("trellis.junit.version") ?: JUNIT}</version>
              <scope>test</scope>
            </dependency>
          </dependencies>
          <build>
            <plugins>
              <plugin>
                <artifactId>maven-resources-plugin</artifactId>
                <version>3.3.1</version>
              </plugin>
              <plugin>
                <artifactId>maven-compiler-plugin</artifactId>
                <version>3.14.0</version>
              </plugin>
              <plugin>
                <artifactId>maven-surefire-plugin</artifactId>
                <version>3.5.6</version>
              </plugin>
            </plugins>
          </build>
        </project>
        """.trimIndent()

    private companion object {
        const val VERSION = "0.1.0-SNAPSHOT"
        const val JUNIT = "5.14.4"

        val CASES =
            """
            {"id": "france", "input": {"country": "France"}, "expect": {"contains": "Paris"}}
            {"id": "italy", "input": {"country": "Italy"}, "expect": {"contains": "Rome"}}
            """.trimIndent()

        val TEST =
            """
            package consumer;

            import dev.trellis.test.eval.EvalOutput;
            import dev.trellis.test.eval.EvalSet;
            import dev.trellis.test.eval.EvalTarget;
            import dev.trellis.test.eval.Evaluation;
            import dev.trellis.test.eval.Scorers;
            import org.junit.jupiter.api.Test;

            class CapitalsEvalTest {
                @Test
                void capitals() {
                    EvalTarget target = EvalTarget.blocking(c -> new EvalOutput(
                        c.input("country").equals("France") ? "Paris" : "Milan"));
                    new Evaluation(EvalSet.fromResource("evals/capitals.jsonl"), target)
                        .scorers(Scorers.contains())
                        .run()
                        .assertPassRate(0.9);
                }
            }
            """.trimIndent()
    }
}
