package dev.trellis.consumer

import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldNotContain
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.io.File
import java.util.concurrent.TimeUnit

/**
 * What a Maven project that imports trellis-bom and depends on a typical selection of modules resolves: the Kotlin
 * standard library and coroutines Trellis is built with, and none of what it does not use. The project's own Maven
 * (the wrapper) resolves small consumer projects against a temporary local repository that holds this build's
 * artifacts, backed read-only by ~/.m2 (maven.repo.local.tail): nothing is installed in ~/.m2.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsumerDependenciesTest {
    private val selections = linkedMapOf(
        "facade" to listOf("trellis-java-facade"),
        "runtime-sqlite" to listOf("trellis-graph-runtime", "trellis-checkpoint-store-sqlite"),
        "langchain4j" to listOf("trellis-langchain4j"),
        "java-langchain4j" to listOf("trellis-java-facade", "trellis-langchain4j"),
        "sqlite-store" to listOf("trellis-checkpoint-store-sqlite"),
        "mcp" to listOf("trellis-mcp"),
        // Spring Boot's and Spring AI's BOMs (imported by these modules' POMs) must not move the Kotlin standard
        // library or coroutines a consumer resolves.
        "spring" to listOf("trellis-spring-boot-starter", "trellis-spring-ai"),
    )

    /** Per selection, the resolved runtime artifacts as `groupId:artifactId` to version. */
    private lateinit var resolved: Map<String, Map<String, String>>

    @BeforeAll
    fun resolve() {
        // A directory of this module's target (JUnit's @TempDir is not injected before a @BeforeAll of the instance).
        val dir = File("target/consumer-projects").absoluteFile.apply { deleteRecursively() }.toPath()
        val repo = Reactor.repository(dir.resolve("repo"))
        val projects = dir.resolve("consumers").toFile().apply { mkdirs() }
        for ((name, artifacts) in selections) {
            File(projects, name).mkdirs()
            File(projects, "$name/pom.xml").writeText(consumerPom(name, artifacts))
        }
        File(projects, "pom.xml").writeText(
            """
            <project xmlns="http://maven.apache.org/POM/4.0.0">
              <modelVersion>4.0.0</modelVersion>
              <groupId>example</groupId><artifactId>consumers</artifactId><version>1</version><packaging>pom</packaging>
              <modules>${selections.keys.joinToString("") { "<module>$it</module>" }}</modules>
            </project>
            """.trimIndent(),
        )
        val command = mutableListOf(
            File(Reactor.root, "mvnw").path,
            "-B",
            "-ntp",
            "-q",
            "-f",
            File(projects, "pom.xml").path,
            "org.apache.maven.plugins:maven-dependency-plugin:3.9.0:list",
            "-DincludeScope=runtime",
            "-DoutputFile=dependencies.txt",
            "-Dmaven.repo.local=$repo",
        )
        val home = File(System.getProperty("user.home"), ".m2/repository")
        if (home.isDirectory) command += "-Dmaven.repo.local.tail=$home"
        val log = dir.resolve("maven.log").toFile()
        val process = ProcessBuilder(command).directory(projects).redirectErrorStream(true).redirectOutput(log).start()
        check(process.waitFor(10, TimeUnit.MINUTES)) { "Maven did not finish resolving the consumer projects" }
        check(process.exitValue() == 0) { "Maven failed resolving the consumer projects:\n${log.readText()}" }
        resolved = selections.keys.associateWith { name -> parse(File(projects, "$name/dependencies.txt").readText()) }
    }

    private fun consumerPom(name: String, artifacts: List<String>): String =
        """
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>example</groupId><artifactId>$name</artifactId><version>1</version>
          <dependencyManagement>
            <dependencies>
              <dependency>
                <groupId>dev.trellis</groupId><artifactId>trellis-bom</artifactId><version>${Reactor.version}</version>
                <type>pom</type><scope>import</scope>
              </dependency>
            </dependencies>
          </dependencyManagement>
          <dependencies>
            ${artifacts.joinToString("\n") { dependency(it) }}
          </dependencies>
        </project>
        """.trimIndent()

    private fun dependency(artifactId: String): String =
        "<dependency><groupId>dev.trellis</groupId><artifactId>$artifactId</artifactId></dependency>"

    /** `   group:artifact:jar:version:scope -- module ...` lines of dependency:list. */
    private fun parse(listing: String): Map<String, String> =
        Regex("""^\s+([\w.\-]+):([\w.\-]+):[\w\-]+(?::[\w.\-]+)?:([\w.\-]+):(compile|runtime)""", RegexOption.MULTILINE)
            .findAll(listing)
            .associate { "${it.groupValues[1]}:${it.groupValues[2]}" to it.groupValues[3] }

    private fun artifacts(selection: String): Set<String> = resolved.getValue(selection).keys

    @Test
    fun `every selection resolves the Kotlin standard library Trellis is built with`() {
        for (selection in selections.keys) {
            (selection to resolved.getValue(selection)["org.jetbrains.kotlin:kotlin-stdlib"]) shouldBe
                (selection to Reactor.kotlinVersion)
        }
    }

    @Test
    fun `every selection that runs graphs resolves the coroutines Trellis is built with`() {
        for (selection in selections.keys - "sqlite-store") {
            (selection to resolved.getValue(selection)["org.jetbrains.kotlinx:kotlinx-coroutines-core-jvm"]) shouldBe
                (selection to Reactor.coroutinesVersion)
        }
    }

    @Test
    fun `chat nodes do not bring the MCP SDK, Reactor, SnakeYAML, Jackson 2 or the Java facade`() {
        val chat = artifacts("langchain4j")
        chat shouldContain "dev.trellis:trellis-langchain4j"
        for (unwanted in listOf(
            "io.modelcontextprotocol.sdk:mcp-core",
            "io.modelcontextprotocol.sdk:mcp",
            "io.projectreactor:reactor-core",
            "org.yaml:snakeyaml",
            "dev.trellis:trellis-java-facade",
        )) {
            chat shouldNotContain unwanted
        }
        artifacts("mcp") shouldContain "io.projectreactor:reactor-core"
    }

    @Test
    fun `a store alone does not bring the graph model`() {
        artifacts("sqlite-store") shouldNotContain "dev.trellis:trellis-graph-dsl"
        artifacts("sqlite-store") shouldContain "org.xerial:sqlite-jdbc"
    }
}
