/*
 * Package dev.trellis.test.kotest — the kotest counterpart of the JUnit 5 extension (`TrellisKotestExtension.kt`).
 *
 * May call: `context`, `internal`.
 */
package dev.trellis.test.kotest
