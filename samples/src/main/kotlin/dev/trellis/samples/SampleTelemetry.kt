package dev.trellis.samples

import dev.trellis.opentelemetry.TrellisTelemetry
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk

/**
 * The samples' OpenTelemetry, configured by the standard `OTEL_*` environment variables (`docs/observability.md`):
 * on when one of [SWITCHES] is set, e.g. `OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318` for a local Jaeger, or
 * `OTEL_TRACES_EXPORTER=logging` for spans on the console. [close] flushes what is still buffered.
 */
internal class SampleTelemetry private constructor(private val sdk: OpenTelemetrySdk) : AutoCloseable {
    val telemetry: TrellisTelemetry = TrellisTelemetry(sdk)

    override fun close() = sdk.close()

    companion object {
        /** The variables that turn tracing on; every other `OTEL_*` variable is read by the SDK as usual. */
        val SWITCHES: List<String> = listOf(
            "OTEL_TRACES_EXPORTER",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        )

        /**
         * An SDK configured from [environment] (the process's by default), or null when none of [SWITCHES] is set.
         * Variables are passed to the SDK as its properties (`OTEL_TRACES_EXPORTER` is `otel.traces.exporter`).
         */
        fun fromEnvironment(environment: Map<String, String> = System.getenv()): SampleTelemetry? {
            if (SWITCHES.none { !environment[it].isNullOrBlank() }) return null
            val properties = environment.filterKeys { it.startsWith("OTEL_") }
                .mapKeys { (name, _) -> name.lowercase().replace('_', '.') }
            val sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier { properties }
                .disableShutdownHook()
                .build()
                .openTelemetrySdk
            return SampleTelemetry(sdk)
        }
    }
}
