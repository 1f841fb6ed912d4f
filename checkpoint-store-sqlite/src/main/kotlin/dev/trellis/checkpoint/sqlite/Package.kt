/*
 * Package dev.trellis.checkpoint.sqlite — `SqliteCheckpointStore` and `SqliteNodeCache`: durable checkpoints and node
 * results in one SQLite file (WAL), shareable by several processes (`docs/persistence-stores.md`).
 *
 * May call: `dev.trellis.checkpoint.jdbc` and the sqlite-jdbc driver.
 */
package dev.trellis.checkpoint.sqlite
