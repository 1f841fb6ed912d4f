package dev.trellis.testing

import java.io.File
import java.nio.file.Path

/**
 * A child JVM on the running test's class path, for the tests that kill a process (crash tests) or stop one (shutdown
 * tests); its output goes to a file.
 */
public object ChildJvm {
    /**
     * Starts [main] with [args] in a small JVM of its own, its output and errors written to [out]; [properties] are
     * JVM options before the class path (`-Dname=value`).
     */
    public fun start(main: Class<*>, args: List<String>, out: File, properties: List<String> = emptyList()): Process {
        val java = Path.of(System.getProperty("java.home"), "bin", "java").toString()
        val command = listOf(
            java,
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
        ) + properties + listOf(
            "-cp",
            System.getProperty("java.class.path"),
            main.name,
        ) + args
        return ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out).start()
    }

    /** The start of what the child printed, for an assertion's message. */
    public fun output(file: File): String = if (file.exists()) file.readText().take(4_000) else "(no output)"
}
