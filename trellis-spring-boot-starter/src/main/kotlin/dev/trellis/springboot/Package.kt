/*
 * Package dev.trellis.springboot — the Spring Boot starter (`docs/spring.md`): the auto-configuration
 * (`TrellisAutoConfiguration.kt`) of a checkpoint store from the application's `DataSource` (`StoreFactory.kt`), of
 * the runners of the graphs declared as beans (`TrellisRunners.kt`), of Micrometer metrics (`RunMetrics.kt`),
 * OpenTelemetry tracing and the instrumentation chain (`InstrumentationChain.kt`), of the actuator health indicator
 * (`TrellisHealthIndicator.kt`, fed by `LeaseWatch.kt`) and of the graceful drain on shutdown (`Drain.kt`); the
 * configuration properties (`TrellisProperties.kt`).
 *
 * May call: the public APIs of the runtime, the Java facade, the stores and trellis-opentelemetry, and Spring Boot.
 */
package dev.trellis.springboot
