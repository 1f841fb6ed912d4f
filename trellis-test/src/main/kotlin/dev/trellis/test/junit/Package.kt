/*
 * Package dev.trellis.test.junit — the JUnit 5 extension (`TrellisExtension.kt`) and its annotation
 * (`TrellisTest.kt`): a fresh store per test, virtual time, the timeline page of a failing test's runs.
 *
 * May call: `context`, `internal`.
 */
package dev.trellis.test.junit
