package dev.trellis.checkpoint

class InMemoryCheckpointStoreTest : CheckpointStoreContract() {
    override fun openStore(clock: TestClock): CheckpointStore = InMemoryCheckpointStore(clock)
}
