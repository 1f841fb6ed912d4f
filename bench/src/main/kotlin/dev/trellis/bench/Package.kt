/*
 * Package dev.trellis.bench — JMH benchmarks (`bench/README.md`): one `*Bench` class per workload (in `src/main/java`),
 * each with the same graph built for Trellis (`TrellisWorkloads.kt`, `CompositionWorkloads.kt`, `BudgetWorkloads.kt`,
 * `ChatWorkloads.kt`, Java in `JavaWorkloads.java`) and for LangGraph4j (`LangGraph4jWorkloads.java`).
 *
 * May call: every module's public API and the peers' libraries; never run by the build.
 */
package dev.trellis.bench
