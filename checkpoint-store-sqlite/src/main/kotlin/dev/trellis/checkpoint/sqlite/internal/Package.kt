/*
 * Package dev.trellis.checkpoint.sqlite.internal — SQLite's dialect of the JDBC store (`SqliteEngine.kt`) and the WAL
 * checkpoints it runs between appends (`WalCheckpointer.kt`).
 *
 * May call: `dev.trellis.checkpoint.jdbc`.
 */
package dev.trellis.checkpoint.sqlite.internal
