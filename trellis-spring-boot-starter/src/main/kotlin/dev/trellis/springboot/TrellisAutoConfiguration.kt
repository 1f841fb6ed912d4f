package dev.trellis.springboot

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.javaapi.JavaRunOptions
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunInstrumentation
import org.springframework.beans.factory.ObjectProvider
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory
import org.springframework.boot.autoconfigure.AutoConfiguration
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty
import org.springframework.boot.context.properties.EnableConfigurationProperties
import org.springframework.context.SmartLifecycle
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.util.ClassUtils
import javax.sql.DataSource

/**
 * The starter's auto-configuration (`docs/spring.md`):
 *
 * - a [TrellisRunners] of every `Graph` bean, whose runs save checkpoints in the store `trellis.store.*` names — by
 *   default PostgreSQL or SQLite after the application's `DataSource`, or a `CheckpointStore` bean of the
 *   application's own — and share one [RunControl];
 * - the runs' instrumentation: the application's `RunInstrumentation` beans, Micrometer metrics when a
 *   `MeterRegistry` bean is there (`trellis.metrics.enabled`), OpenTelemetry tracing when trellis-opentelemetry is on
 *   the class path and an `OpenTelemetry` bean is there (`trellis.tracing.enabled`);
 * - the graceful drain of the runs on shutdown (`trellis.drain.*`);
 * - the actuator health indicator `trellis` (store reachable, leases renewing) when Spring Boot's health module is
 *   on the class path (`management.health.trellis.enabled`).
 *
 * Every bean backs off when the application declares its own.
 */
@AutoConfiguration(
    afterName = [
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    ],
)
@EnableConfigurationProperties(TrellisProperties::class)
public class TrellisAutoConfiguration {
    /** The control the runs share: the drain on shutdown goes through it. */
    @Bean
    @ConditionalOnMissingBean
    public fun trellisRunControl(): RunControl = RunControl()

    /** The runners of the `Graph` beans, with the store, the control and the instrumentation. */
    @Bean
    @ConditionalOnMissingBean
    public fun trellisRunners(
        properties: TrellisProperties,
        graphs: ObjectProvider<Graph>,
        stores: ObjectProvider<CheckpointStore>,
        dataSources: ObjectProvider<DataSource>,
        instrumentations: ObjectProvider<RunInstrumentation>,
        control: RunControl,
        beanFactory: ConfigurableListableBeanFactory,
    ): TrellisRunners {
        val own = stores.ifUnique
        val store = (own ?: StoreFactory.create(properties.store, dataSources.ifUnique))?.let(::LeaseWatch)
        val parts = instrumentations.orderedStream().toList().toMutableList()
        val loader = beanFactory.beanClassLoader
        if (properties.metrics.enabled && ClassUtils.isPresent(METER_REGISTRY, loader)) {
            MetricsSupport.instrumentation(beanFactory)?.let { parts += it }
        }
        if (properties.tracing.enabled && ClassUtils.isPresent(TELEMETRY, loader) &&
            ClassUtils.isPresent(OPEN_TELEMETRY, loader)
        ) {
            TracingSupport.instrumentation(beanFactory)?.let { parts += it }
        }
        val settings = JavaRunOptions.builder()
            .checkpointing(store?.let { Checkpointing(it) })
            .control(control)
            .instrumentation(InstrumentationChain.of(parts))
            .build()
        return TrellisRunners(graphs.orderedStream().toList(), settings, store, control, closeStore = own == null)
    }

    /** Drains the runs when the application shuts down. */
    @Bean
    @ConditionalOnProperty(name = ["trellis.drain.enabled"], havingValue = "true", matchIfMissing = true)
    public fun trellisDrain(control: RunControl, properties: TrellisProperties): SmartLifecycle =
        Drain(control, properties.drain.timeout)

    /** The actuator health indicator `trellis`. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = ["org.springframework.boot.health.contributor.HealthIndicator"])
    @ConditionalOnProperty(name = ["management.health.trellis.enabled"], havingValue = "true", matchIfMissing = true)
    internal class Health {
        @Bean
        @ConditionalOnMissingBean(name = ["trellisHealthIndicator"])
        fun trellisHealthIndicator(runners: TrellisRunners, properties: TrellisProperties): TrellisHealthIndicator =
            TrellisHealthIndicator(
                runners.store,
                runners.store as? LeaseWatch,
                runners.control,
                properties.store.leaseDuration,
            )
    }

    private companion object {
        const val METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry"
        const val TELEMETRY = "dev.trellis.opentelemetry.TrellisTelemetry"
        const val OPEN_TELEMETRY = "io.opentelemetry.api.OpenTelemetry"
    }
}

/** Micrometer, loaded only when it is on the class path. */
internal object MetricsSupport {
    fun instrumentation(beanFactory: ConfigurableListableBeanFactory): RunInstrumentation? =
        beanFactory.getBeanProvider(io.micrometer.core.instrument.MeterRegistry::class.java).ifUnique?.let(::RunMetrics)
}

/** trellis-opentelemetry, loaded only when it is on the class path. */
internal object TracingSupport {
    fun instrumentation(beanFactory: ConfigurableListableBeanFactory): RunInstrumentation? =
        beanFactory.getBeanProvider(io.opentelemetry.api.OpenTelemetry::class.java).ifUnique
            ?.let { dev.trellis.opentelemetry.TrellisTelemetry(it) }
}
