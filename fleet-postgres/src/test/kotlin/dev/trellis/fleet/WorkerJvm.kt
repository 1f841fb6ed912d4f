package dev.trellis.fleet

import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/** A worker JVM on this test's class path (as the runtime's crash tests start theirs); its output goes to [out]. */
class WorkerJvm(val name: String, args: List<String>, val out: File) {
    val process: Process = ProcessBuilder(
        listOf(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            FleetChild::class.java.name,
        ) + args,
    ).redirectErrorStream(true).redirectOutput(out).start()

    fun lines(): List<String> = if (out.exists()) out.readLines() else emptyList()

    fun output(): String = lines().filter {
        !it.startsWith("CLAIM") && !it.startsWith("FINISH")
    }.take(40).joinToString("\n")

    fun signal(name: String) {
        val kill = ProcessBuilder("kill", "-$name", process.pid().toString()).inheritIO().start()
        check(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0) { "kill -$name ${process.pid()} failed" }
    }

    /** Closes its standard input (it drains and exits), or kills it if it does not exit within [seconds]. */
    fun stop(seconds: Long) {
        try {
            process.outputStream.close()
        } catch (_: java.io.IOException) {
            // already gone
        }
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) process.destroyForcibly().waitFor()
    }
}
