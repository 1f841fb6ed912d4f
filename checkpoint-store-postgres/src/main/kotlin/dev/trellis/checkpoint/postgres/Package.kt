/*
 * Package dev.trellis.checkpoint.postgres — `PostgresCheckpointStore` and `PostgresNodeCache`: durable checkpoints
 * and node results in PostgreSQL, for many workers sharing runs, with group commit (`docs/persistence-stores.md`).
 *
 * May call: `dev.trellis.checkpoint.jdbc` and the PostgreSQL driver.
 */
package dev.trellis.checkpoint.postgres
