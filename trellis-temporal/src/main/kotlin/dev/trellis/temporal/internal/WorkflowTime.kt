package dev.trellis.temporal.internal

import io.temporal.workflow.Workflow
import java.time.Clock
import java.time.Instant
import java.time.ZoneId
import java.time.ZoneOffset
import kotlin.time.AbstractLongTimeSource
import kotlin.time.DurationUnit

/** The run's wall clock inside workflow code: Temporal's deterministic workflow time. */
internal object WorkflowClock : Clock() {
    override fun getZone(): ZoneId = ZoneOffset.UTC

    override fun withZone(zone: ZoneId?): Clock = this

    override fun instant(): Instant = Instant.ofEpochMilli(Workflow.currentTimeMillis())

    override fun millis(): Long = Workflow.currentTimeMillis()
}

/** The run's time source inside workflow code: Temporal's workflow time, in milliseconds. */
internal object WorkflowTimeSource : AbstractLongTimeSource(DurationUnit.MILLISECONDS) {
    override fun read(): Long = Workflow.currentTimeMillis()
}
