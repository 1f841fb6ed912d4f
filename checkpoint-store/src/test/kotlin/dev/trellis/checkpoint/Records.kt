package dev.trellis.checkpoint

import java.time.Instant

/** Builds test checkpoints with sensible defaults. */
fun checkpoint(
    runId: String,
    sequence: Long,
    kind: CheckpointRecord.Kind = CheckpointRecord.Kind.FULL,
    parentSequence: Long? = if (sequence == 1L) null else sequence - 1,
    payload: String = """{"step":$sequence}""",
    status: String = "RUNNING",
    metadata: Map<String, String> = mapOf("node" to "n$sequence"),
    forkedFrom: CheckpointRef? = null,
): CheckpointRecord = CheckpointRecord(
    runId = runId,
    sequence = sequence,
    parentSequence = parentSequence,
    graphId = "graph-a",
    schemaVersion = 1,
    createdAt = Instant.parse("2026-01-01T00:00:00.123456789Z").plusSeconds(sequence),
    status = status,
    kind = kind,
    payload = payload,
    metadata = metadata,
    forkedFrom = forkedFrom,
)
