/*
 * Package dev.trellis.checkpoint.internal — the rules every store applies to an append, a claim and a renewal
 * (`StoreRules.kt`), shared by the in-memory store and the SQL stores (`@InternalStoreApi`).
 *
 * May call: the public `dev.trellis.checkpoint` package.
 */
package dev.trellis.checkpoint.internal
