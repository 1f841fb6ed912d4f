/*
 * Package dev.trellis.opentelemetry — traces and metrics of runs (`docs/observability.md`): the entry point
 * (`TrellisTelemetry.kt`), a span per run and per node execution (`RunTrace.kt`, `NodeSpans.kt`,
 * `SpanEventPayload.kt`), run, node and checkpoint metrics (`TrellisMetrics.kt`) and a traced store
 * (`TracedStore.kt`).
 *
 * May call: the runtime's public API (events and interceptors) and OpenTelemetry.
 */
package dev.trellis.opentelemetry
