package dev.trellis.test.internal

import java.nio.file.Files
import java.nio.file.Path

/** Where failing tests' timeline pages go. */
internal object TimelineFiles {
    const val PROPERTY = "trellis.timelines.dir"

    /** `trellis.timelines.dir`, else `target/trellis-timelines` (beside Maven's reports), else a temporary one. */
    fun directory(): Path {
        System.getProperty(PROPERTY)?.takeIf { it.isNotBlank() }?.let { return Path.of(it) }
        val target = Path.of("target")
        if (Files.isDirectory(target)) return target.resolve("trellis-timelines")
        val build = Path.of("build")
        if (Files.isDirectory(build)) return build.resolve("trellis-timelines")
        return Path.of(System.getProperty("java.io.tmpdir"), "trellis-timelines")
    }

    /** [name] as a file name. */
    fun safeName(
        name: String,
    ): String = name.replace(Regex("[^A-Za-z0-9._-]+"), "_").trim('_').take(120).ifEmpty { "run" }
}
