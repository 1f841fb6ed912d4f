package dev.trellis.consumer

import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.jar.JarEntry
import java.util.jar.JarOutputStream

/** The modules of this build as a consumer sees them: published ones, their POMs and jars. */
object Reactor {
    /** The checkout's root (the tests run in consumer-tests/). */
    val root: File = File("..").canonicalFile

    /** The version being built. */
    val version: String = property("trellis.version")

    /** The Kotlin and coroutines versions the project is built with (the parent pom's properties). */
    val kotlinVersion: String = property("trellis.kotlin.version")
    val coroutinesVersion: String = property("trellis.coroutines.version")

    private fun property(name: String): String =
        System.getProperty(name) ?: error("$name is not set: run the tests through Maven (the pom sets it)")

    /** Every module directory of the root pom, with its artifactId and whether it is published. */
    val modules: List<Module> by lazy {
        Regex("<module>([^<]+)</module>").findAll(File(root, "pom.xml").readText()).map { m ->
            val dir = File(root, m.groupValues[1])
            val pom = File(dir, "pom.xml").readText()
            Module(
                dir,
                artifactId(pom),
                packaging = Regex("<packaging>([^<]+)</packaging>").find(pom)?.groupValues?.get(1) ?: "jar",
                published = !pom.contains("<maven.deploy.skip>true</maven.deploy.skip>"),
            )
        }.toList()
    }

    /** The published library modules (jar packaging, deployed). */
    val libraries: List<Module> get() = modules.filter { it.published && it.packaging == "jar" }

    fun module(artifactId: String): Module = modules.single { it.artifactId == artifactId }

    private fun artifactId(pom: String): String {
        // the project's own artifactId: the first one after </parent> (or the first one when there is no parent)
        val afterParent = pom.substringAfter("</parent>", pom)
        return Regex("<artifactId>([^<]+)</artifactId>").find(afterParent)!!.groupValues[1]
    }

    /**
     * A local Maven repository holding this build's POMs and jars (and nothing else) under [dir]: what `install`
     * would put in ~/.m2, without touching it. A module whose jar is not packaged yet (`./mvnw test`) gets a jar made
     * of its compiled classes.
     */
    fun repository(dir: Path): Path {
        put(dir, "trellis-parent", "pom", File(root, "pom.xml").toPath())
        for (module in modules.filter { it.published }) {
            put(dir, module.artifactId, "pom", File(module.dir, "pom.xml").toPath())
            if (module.packaging == "jar") put(dir, module.artifactId, "jar", module.jar().toPath())
        }
        return dir
    }

    private fun put(repo: Path, artifactId: String, extension: String, from: Path) {
        val target = repo.resolve("dev/trellis/$artifactId/$version/$artifactId-$version.$extension")
        Files.createDirectories(target.parent)
        Files.copy(from, target)
    }

    class Module(val dir: File, val artifactId: String, val packaging: String, val published: Boolean) {
        /** The module's packaged jar, or one made of target/classes when it is not packaged. */
        fun jar(): File {
            val packaged = File(dir, "target/$artifactId-$version.jar")
            if (packaged.isFile) return packaged
            val classes = File(dir, "target/classes")
            check(classes.isDirectory) { "$artifactId is not compiled ($classes missing): build it first." }
            val made = File(dir, "target/consumer-tests-$artifactId.jar")
            JarOutputStream(made.outputStream()).use { out ->
                classes.walkTopDown().filter { it.isFile }.forEach { f ->
                    out.putNextEntry(JarEntry(f.relativeTo(classes).invariantSeparatorsPath))
                    f.inputStream().use { it.copyTo(out) }
                    out.closeEntry()
                }
            }
            return made
        }

        override fun toString(): String = artifactId
    }
}
