package dev.trellis.samples

import com.github.ajalt.clikt.core.parse
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files

/** `./trellis-samples studio --once`: the samples run into the store, the studio answers on their runs, then stops. */
class StudioCommandTest {
    @Test
    fun `the studio command runs the samples into the store and serves their runs`() {
        val file = Files.createTempFile("studio-samples", ".db")
        try {
            StudioCommand().parse(listOf("--once", "--store", file.toString()))
            SqliteCheckpointStore(file).use { store ->
                val graphs = runBlocking { store.runs() }.mapNotNull { it.graphId }.toSet()
                graphs shouldContainAll listOf("mapreduce", "research")
            }
            StudioCommand().parse(listOf("--once", "--no-samples", "--store", file.toString()))
            // A mistyped path with --no-samples is refused, not opened as a new, empty store.
            val typo = file.resolveSibling("no-such-${file.fileName}")
            assertThrows<IllegalArgumentException> {
                StudioCommand().parse(listOf("--once", "--no-samples", "--store", typo.toString()))
            }.message!! shouldContain "No SQLite file"
            Files.exists(typo) shouldBe false
        } finally {
            Files.deleteIfExists(file)
        }
    }
}
