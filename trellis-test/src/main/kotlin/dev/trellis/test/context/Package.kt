/*
 * Package dev.trellis.test.context — what a test gets from the kit's extensions (`docs/testing.md`): a fresh store of
 * the kind asked for (`StoreKind.kt`), runs in virtual time and their recordings (`TrellisTestContext.kt`,
 * `RecordedRun.kt`).
 *
 * May call: `internal` (stores, timeline pages) and the runtime's public API.
 */
package dev.trellis.test.context
