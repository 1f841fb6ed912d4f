package dev.trellis.springboot

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.springboot.TrellisProperties.StoreType
import java.nio.file.Path
import java.time.Clock
import javax.sql.DataSource

/** Makes the checkpoint store `trellis.store.*` asks for, on the application's [DataSource] when it has one. */
internal object StoreFactory {
    /** The store, or null for [StoreType.NONE]. */
    fun create(settings: TrellisProperties.Store, dataSource: DataSource?): CheckpointStore? {
        val lease = settings.leaseDuration
        return when (settings.type) {
            StoreType.NONE -> null
            StoreType.MEMORY -> InMemoryCheckpointStore(Clock.systemUTC(), lease)
            StoreType.POSTGRES -> postgres(settings, required(dataSource, "postgres"))
            StoreType.SQLITE -> sqlite(settings, dataSource)
            StoreType.AUTO -> when {
                dataSource == null && settings.sqlitePath != null -> sqlite(settings, null)
                dataSource == null -> InMemoryCheckpointStore(Clock.systemUTC(), lease)
                else -> when (val product = productOf(dataSource)) {
                    "PostgreSQL" -> postgres(settings, dataSource)
                    "SQLite" -> sqlite(settings, dataSource)
                    else -> throw IllegalStateException(
                        "trellis.store.type=auto found a $product DataSource; Trellis stores checkpoints in " +
                            "PostgreSQL or SQLite. Set trellis.store.type to memory (runs resume only in this " +
                            "process), none, or sqlite with trellis.store.sqlite-path.",
                    )
                }
            }
        }
    }

    private fun postgres(settings: TrellisProperties.Store, dataSource: DataSource): CheckpointStore =
        PostgresCheckpointStore(dataSource, settings.schema, leaseDuration = settings.leaseDuration)

    private fun sqlite(settings: TrellisProperties.Store, dataSource: DataSource?): CheckpointStore {
        val path = settings.sqlitePath ?: sqliteFile(required(dataSource, "sqlite"))
        return SqliteCheckpointStore(Path.of(path), leaseDuration = settings.leaseDuration)
    }

    /** The file of a SQLite [dataSource]'s `jdbc:sqlite:` URL. */
    private fun sqliteFile(dataSource: DataSource): String {
        val url = dataSource.connection.use { it.metaData.url }
        val file = url.removePrefix("jdbc:sqlite:").substringBefore('?').removePrefix("file:")
        require(url.startsWith("jdbc:sqlite:") && file.isNotEmpty() && !file.startsWith(":memory:")) {
            "The SQLite DataSource's URL is $url; the store needs a database file that other connections can open. " +
                "Point the DataSource at a file (jdbc:sqlite:/var/lib/app/app.db), or set trellis.store.sqlite-path."
        }
        return file
    }

    private fun productOf(dataSource: DataSource): String =
        dataSource.connection.use { it.metaData.databaseProductName }

    private fun required(dataSource: DataSource?, type: String): DataSource = dataSource
        ?: throw IllegalStateException(
            "trellis.store.type=$type needs the application's DataSource, and there is none; configure " +
                "spring.datasource.url (or declare a DataSource bean), or choose another trellis.store.type.",
        )
}
