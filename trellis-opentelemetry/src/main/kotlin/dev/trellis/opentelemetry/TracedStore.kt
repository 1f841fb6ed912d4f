package dev.trellis.opentelemetry

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.api.trace.TraceFlags
import io.opentelemetry.api.trace.TraceState

/**
 * A [CheckpointStore] that measures checkpoint writes and records, in each checkpoint's metadata, the span that
 * was current when it was saved (the run's span, for a traced run): see [TraceMetadata].
 */
internal class TracedStore(
    private val store: CheckpointStore,
    private val metrics: TrellisMetrics,
) : CheckpointStore by store {
    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        val span = Span.current().spanContext
        val stored = if (span.isValid) TraceMetadata.with(record, span) else record
        val started = System.nanoTime()
        store.append(lease, stored)
        metrics.checkpointWritten(
            record.graphId,
            record.kind == CheckpointRecord.Kind.FULL,
            System.nanoTime() - started,
            utf8Length(record.payload),
        )
    }

    override fun close() = store.close()

    private fun utf8Length(text: String): Long {
        var bytes = 0L
        var i = 0
        while (i < text.length) {
            val c = text[i]
            bytes += when {
                c.code < 0x80 -> 1
                c.code < 0x800 -> 2
                Character.isHighSurrogate(c) -> {
                    i++
                    4
                }
                else -> 3
            }
            i++
        }
        return bytes
    }
}

/** The trace of the run that saved a checkpoint, in the checkpoint's metadata (W3C `traceparent` format). */
internal object TraceMetadata {
    const val KEY = "trellis.traceparent"

    fun with(record: CheckpointRecord, span: SpanContext): CheckpointRecord = CheckpointRecord(
        record.runId,
        record.sequence,
        record.parentSequence,
        record.graphId,
        record.schemaVersion,
        record.createdAt,
        record.status,
        record.kind,
        record.payload,
        record.metadata + (KEY to "00-${span.traceId}-${span.spanId}-${span.traceFlags.asHex()}"),
        record.forkedFrom,
    )

    /** The span context a checkpoint's metadata names, or null. */
    fun read(metadata: Map<String, String>): SpanContext? {
        val parts = metadata[KEY]?.split('-') ?: return null
        if (parts.size != 4) return null
        val context = SpanContext.createFromRemoteParent(
            parts[1],
            parts[2],
            TraceFlags.fromHex(parts[3], 0),
            TraceState.getDefault(),
        )
        return context.takeIf { it.isValid }
    }
}
