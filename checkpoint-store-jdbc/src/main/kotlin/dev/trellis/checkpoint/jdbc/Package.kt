/*
 * Package dev.trellis.checkpoint.jdbc — the store rules in SQL, shared by the SQLite and PostgreSQL stores and internal
 * to Trellis: the store (`JdbcCheckpointStore.kt`) over a dialect (`JdbcEngine.kt`), group commit of concurrent
 * appends (`GroupCommit.kt`), the node cache (`JdbcNodeCache.kt`), schema migrations (`Migrations.kt`), rows and
 * metadata (`Rows.kt`, `MetadataCodec.kt`).
 *
 * May call: `dev.trellis.checkpoint` and JDBC; no driver.
 */
package dev.trellis.checkpoint.jdbc
