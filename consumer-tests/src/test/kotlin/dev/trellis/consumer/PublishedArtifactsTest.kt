package dev.trellis.consumer

import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import org.junit.jupiter.api.Test
import java.io.File
import java.util.jar.JarFile

/** The published artifacts are what a release needs: a BOM of them all, metadata, sources, module names. */
class PublishedArtifactsTest {
    private val bom = File(Reactor.root, "bom/pom.xml").readText()

    @Test
    fun `trellis-bom manages every published Trellis artifact and nothing else`() {
        val coordinates =
            """<groupId>([^<]+)</groupId>\s*<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>"""
        val managed = Regex(coordinates)
            .findAll(bom.substringAfter("<dependencyManagement>"))
            .map { it.groupValues.drop(1) }
            .toList()
        managed.map { it[0] }.toSet() shouldBe setOf("dev.trellis")
        managed.map { it[2] }.toSet() shouldBe setOf("\${project.version}")
        managed.map { it[1] }.toSet() shouldBe Reactor.libraries.map { it.artifactId }.toSet()
        val unpublishedModules =
            listOf("trellis-samples", "trellis-bench", "trellis-test-support", "trellis-consumer-tests")
        for (unpublished in unpublishedModules) {
            Reactor.module(unpublished).published shouldBe false
            bom shouldNotContain "<artifactId>$unpublished</artifactId>"
        }
        // The BOM's own version is the reactor's, and it has no parent (an import would bring the parent's pins).
        Regex("<version>([^<]+)</version>").find(bom)!!.groupValues[1] shouldBe Reactor.version
        bom shouldNotContain "<parent>"
    }

    @Test
    fun `published POMs carry url, license, scm and developers`() {
        val elements = listOf("<url>", "<licenses>", "<name>Apache-2.0</name>", "<scm", "<connection>", "<developers>")
        for (pom in listOf(File(Reactor.root, "pom.xml").readText(), bom)) {
            for (element in elements) {
                pom shouldContain element
            }
        }
        File(Reactor.root, "LICENSE").readText() shouldContain "Apache License"
    }

    @Test
    fun `every library jar names its module and has a sources jar`() {
        for (module in Reactor.libraries) {
            val jar = File(module.dir, "target/${module.artifactId}-${Reactor.version}.jar")
            if (!jar.isFile) continue // ./mvnw test: nothing packaged yet; `verify` checks it
            val name = JarFile(jar).use { it.manifest.mainAttributes.getValue("Automatic-Module-Name") }
            (module.artifactId to name?.startsWith("dev.trellis.")) shouldBe (module.artifactId to true)
            val sources = File(module.dir, "target/${module.artifactId}-${Reactor.version}-sources.jar")
            (module.artifactId to sources.isFile) shouldBe (module.artifactId to true)
            JarFile(sources).use { j -> j.entries().toList().any { it.name.endsWith(".kt") } } shouldBe true
        }
    }

    @Test
    fun `the facade's javadoc jar holds Dokka's javadoc pages (every library's, in the release profile)`() {
        val facade = Reactor.module("trellis-java-facade")
        val javadoc = File(facade.dir, "target/trellis-java-facade-${Reactor.version}-javadoc.jar")
        if (!File(facade.dir, "target/trellis-java-facade-${Reactor.version}.jar").isFile) return // not packaged
        val entries = JarFile(javadoc).use { j -> j.entries().toList().map { it.name } }
        entries.contains("index.html") shouldBe true
        entries.any { it.startsWith("dev/trellis/javaapi/") && it.endsWith(".html") } shouldBe true
        for (module in Reactor.libraries) {
            val jar = File(module.dir, "target/${module.artifactId}-${Reactor.version}-javadoc.jar")
            if (jar.isFile) JarFile(jar).use { it.getEntry("index.html") != null } shouldBe true
        }
    }

    @Test
    fun `every dependency snippet in the docs imports trellis-bom and names no Trellis version`() {
        val docs = listOf(File(Reactor.root, "README.md")) +
            File(Reactor.root, "docs").walkTopDown().filter { it.isFile && it.extension == "md" }
        val withSnippets = docs.filter { it.readText().contains("<groupId>dev.trellis</groupId>") }
        withSnippets.map { it.name } shouldContainAll listOf("README.md", "agents.md", "java.md")
        for (doc in withSnippets) {
            val text = doc.readText()
            val dependencies = Regex("<dependency>(.*?)</dependency>", RegexOption.DOT_MATCHES_ALL).findAll(text)
                .map { it.groupValues[1] }.filter { it.contains("<groupId>dev.trellis</groupId>") }.toList()
            for (dependency in dependencies) {
                val isBomImport = dependency.contains("<artifactId>trellis-bom</artifactId>")
                (doc.name to dependency.contains("<version>")) shouldBe (doc.name to isBomImport)
            }
            (doc.name to text.contains("<artifactId>trellis-bom</artifactId>")) shouldBe (doc.name to true)
        }
    }
}
