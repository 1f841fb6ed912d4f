package dev.trellis.consumer

import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.PrintStream
import java.net.URLClassLoader
import java.nio.file.Path

/**
 * A Kotlin consumer on the oldest supported compiler (Kotlin 2.2, README.md "Requirements") compiles code that uses
 * the DSL and the runtime against this build's jars, and runs it on Kotlin 2.2's standard library: the libraries are
 * compiled with `-api-version 2.2 -language-version 2.2`, so their metadata is readable by Kotlin 2.2 and they call
 * nothing of the standard library newer than 2.2.
 *
 * The compiler runs in a class loader of its own (kotlin-compiler-embeddable and its dependencies, copied to
 * target/kotlin-2.2.x by the build), as a consumer's build would run it. A Kotlin 2.2 consumer has its own
 * kotlin-stdlib 2.2 on the classpath (README.md says so): that is the standard library used here.
 */
class ConsumerKotlin22Test {
    private val compilerDir = File(System.getProperty("consumer.kotlin.dir") ?: error("consumer.kotlin.dir is not set"))
    private val consumerKotlin = System.getProperty("consumer.kotlin.version")
    private val stdlib = File(compilerDir, "kotlin-stdlib-$consumerKotlin.jar")

    /** Third-party jars of the test classpath that Trellis' runtime needs (coroutines, serialization, collections). */
    private fun testClasspathJar(prefix: String): File =
        System.getProperty("java.class.path").split(File.pathSeparator).map(::File)
            .single { it.name.startsWith(prefix) && it.name.endsWith(".jar") }

    private val libraries: List<File>
        get() = listOf("trellis-graph-dsl", "trellis-checkpoint-store", "trellis-graph-runtime")
            .map { Reactor.module(it).jar() } +
            listOf(
                "kotlinx-coroutines-core-jvm-",
                "kotlinx-serialization-core-jvm-",
                "kotlinx-serialization-json-jvm-",
                "kotlinx-collections-immutable-jvm-",
            ).map(::testClasspathJar)

    @TempDir
    lateinit var dir: Path

    @Test
    fun `Kotlin 2_2 compiles a graph against Trellis and runs it on its own standard library`() {
        val source = dir.resolve("Consumer.kt").toFile()
        source.writeText(javaClass.getResource("/kotlin22/Consumer.kt")!!.readText())
        val out = dir.resolve("classes").toFile()
        val classpath = (libraries + stdlib).joinToString(File.pathSeparator)

        val compiler = URLClassLoader(
            compilerDir.listFiles()!!.filter { it.name.endsWith(".jar") }.map { it.toURI().toURL() }.toTypedArray(),
            ClassLoader.getPlatformClassLoader(),
        )
        val messages = ByteArrayOutputStream()
        val exitCode = compiler.use { loader ->
            val cli = loader.loadClass("org.jetbrains.kotlin.cli.jvm.K2JVMCompiler")
            val exec = cli.getMethod("exec", PrintStream::class.java, Array<String>::class.java)
            exec.invoke(
                cli.getConstructor().newInstance(),
                PrintStream(messages, true),
                arrayOf(
                    "-no-stdlib",
                    "-no-reflect",
                    "-jvm-target",
                    "17",
                    "-Werror",
                    "-classpath",
                    classpath,
                    "-d",
                    out.path,
                    source.path,
                ),
            ).toString()
        }
        (exitCode to messages.toString()) shouldBe ("OK" to "")

        // Runs on Kotlin 2.2's standard library: nothing newer is on this class path.
        val runtime = URLClassLoader(
            (listOf(out) + libraries + stdlib).map { it.toURI().toURL() }.toTypedArray(),
            ClassLoader.getPlatformClassLoader(),
        )
        val answer = runtime.use { it.loadClass("consumer.ConsumerKt").getMethod("answer").invoke(null) }
        answer shouldBe "COMPLETED: papers, plan for why, web, written"
    }
}
