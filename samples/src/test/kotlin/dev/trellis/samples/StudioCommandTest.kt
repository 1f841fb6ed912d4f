package dev.trellis.samples

import com.github.ajalt.clikt.core.parse
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import io.kotest.matchers.collections.shouldContainAll
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
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
        } finally {
            Files.deleteIfExists(file)
        }
    }
}
