package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreContract
import dev.trellis.testing.TestClock
import dev.trellis.testing.TestPostgres

/** The store contract with group commit on: every rule holds for appends written in shared transactions. */
class PostgresGroupCommitContractTest : CheckpointStoreContract() {
    private val schemas = mutableListOf<String>()

    override fun openStore(clock: TestClock): CheckpointStore = PostgresCheckpointStore(
        TestPostgres.dataSource,
        TestPostgres.newSchema().also { schemas += it },
        clock,
        groupCommit = true,
    )

    override fun cleanUp() {
        schemas.forEach(TestPostgres::dropSchema)
    }
}
