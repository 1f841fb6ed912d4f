package dev.trellis.checkpoint

import dev.trellis.testing.TestClock

class InMemoryCheckpointStoreTest : CheckpointStoreContract() {
    override fun openStore(clock: TestClock): CheckpointStore = InMemoryCheckpointStore(clock)
}
