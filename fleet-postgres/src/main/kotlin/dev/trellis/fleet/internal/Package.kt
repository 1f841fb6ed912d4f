/*
 * Package dev.trellis.fleet.internal — the queue and its claims: the queue's tables and statements (`Tables.kt`,
 * `Queue.kt`), a claimed run (`Claim.kt`) and when a worker claims (`ClaimPacing.kt`), the store leases granted with a
 * claim (`StoreLeases.kt`, `FleetStore.kt`), how a claim ended (`Outcome.kt`), LISTEN/NOTIFY (`Listener.kt`) and the
 * state as the queue stores it (`StateJson.kt`).
 *
 * May call: JDBC, the checkpoint stores and the runtime's public API; used by `dev.trellis.fleet` only.
 */
package dev.trellis.fleet.internal
