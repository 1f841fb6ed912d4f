package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore

/** [RunPersistenceContract] on the in-memory store: every "process" shares the one store. */
class InMemoryRunPersistenceTest : RunPersistenceContract() {
    private val store = InMemoryCheckpointStore()

    override fun newStore(): CheckpointStore = store
}

/** [RunPersistenceContract] on a temporary SQLite file; every store opens it anew. */
class SqliteRunPersistenceTest : RunPersistenceContract() {
    private val db = SqlDatabase(Backend.SQLITE)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}

/** [RunPersistenceContract] on a fresh PostgreSQL schema; every store stands for another process. */
class PostgresRunPersistenceTest : RunPersistenceContract() {
    private val db = SqlDatabase(Backend.POSTGRES)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}

/** [CompositionPersistenceContract] on the in-memory store. */
class InMemoryCompositionPersistenceTest : CompositionPersistenceContract() {
    private val store = InMemoryCheckpointStore()

    override fun newStore(): CheckpointStore = store
}

/** [CompositionPersistenceContract] on a temporary SQLite file; every store opens it anew. */
class SqliteCompositionPersistenceTest : CompositionPersistenceContract() {
    private val db = SqlDatabase(Backend.SQLITE)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}

/** [CompositionPersistenceContract] on a fresh PostgreSQL schema; every store stands for another process. */
class PostgresCompositionPersistenceTest : CompositionPersistenceContract() {
    private val db = SqlDatabase(Backend.POSTGRES)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}
