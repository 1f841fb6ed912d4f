package dev.trellis.langchain4j

import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.Json
import java.sql.Connection
import javax.sql.DataSource

/**
 * A durable [ConversationMemory] in a SQL table, for SQLite and PostgreSQL (any database with
 * `CREATE TABLE IF NOT EXISTS`): one row per thread and run, holding that run's messages as JSON (the same
 * `@Serializable` [Message] as in checkpoints). The table is created on construction if missing.
 *
 * Runs are kept in the order they were first saved (a sequence number per thread; two runs of one thread saved at
 * the same instant on PostgreSQL may get the same number, then they are ordered by run id). Saving a run again
 * replaces its row. Give it a connection pool (PostgreSQL) or an `org.sqlite.SQLiteDataSource` on the database file.
 *
 * ```kotlin
 * val memory = JdbcConversationMemory(dataSource, table = "trellis.conversation_memory")
 * val chat = threadAgent(reactAgent(model, tools), memory)
 * ```
 */
public class JdbcConversationMemory @JvmOverloads constructor(
    private val dataSource: DataSource,
    /** The table, optionally schema-qualified (`trellis.conversation_memory`); the schema must exist. */
    public val table: String = "trellis_conversation_memory",
) : ConversationMemory {
    init {
        require(table.matches(Regex("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?"))) {
            "Table name '$table' is not a plain SQL name (letters, digits, '_', optionally schema.table)."
        }
        dataSource.connection.use { c ->
            c.createStatement().use {
                it.execute(
                    "CREATE TABLE IF NOT EXISTS $table (thread_id VARCHAR(255) NOT NULL, " +
                        "run_id VARCHAR(255) NOT NULL, seq BIGINT NOT NULL, messages TEXT NOT NULL, " +
                        "PRIMARY KEY (thread_id, run_id))",
                )
            }
        }
    }

    override fun load(threadId: String): List<Message> = dataSource.connection.use { c ->
        c.prepareStatement("SELECT messages FROM $table WHERE thread_id = ? ORDER BY seq, run_id").use { s ->
            s.setString(1, threadId)
            s.executeQuery().use { rows ->
                val messages = ArrayList<Message>()
                while (rows.next()) messages += json.decodeFromString(codec, rows.getString(1))
                messages
            }
        }
    }

    override fun save(threadId: String, runId: String, messages: List<Message>) {
        val text = json.encodeToString(codec, messages)
        dataSource.connection.use { c ->
            inTransaction(c) {
                replace(c, threadId, runId, text) ||
                    insert(c, threadId, runId, text)
            }
        }
    }

    private fun replace(c: Connection, threadId: String, runId: String, text: String): Boolean =
        c.prepareStatement("UPDATE $table SET messages = ? WHERE thread_id = ? AND run_id = ?").use { s ->
            s.setString(1, text)
            s.setString(2, threadId)
            s.setString(3, runId)
            s.executeUpdate() > 0
        }

    private fun insert(c: Connection, threadId: String, runId: String, text: String): Boolean =
        c.prepareStatement(
            "INSERT INTO $table (thread_id, run_id, seq, messages) VALUES (?, ?, " +
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM $table WHERE thread_id = ?), ?)",
        ).use { s ->
            s.setString(1, threadId)
            s.setString(2, runId)
            s.setString(3, threadId)
            s.setString(4, text)
            s.executeUpdate() > 0
        }

    private fun inTransaction(c: Connection, block: () -> Unit) {
        val auto = c.autoCommit
        c.autoCommit = false
        try {
            block()
            c.commit()
        } catch (e: Exception) {
            c.rollback()
            throw e
        } finally {
            c.autoCommit = auto
        }
    }

    override fun toString(): String = "JdbcConversationMemory($table)"

    private companion object {
        val json = Json
        val codec = ListSerializer(Message.serializer())
    }
}
