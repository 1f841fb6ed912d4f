/*
 * Package dev.trellis.checkpoint.postgres.internal — PostgreSQL's dialect of the JDBC store (`PostgresEngine.kt`).
 *
 * May call: `dev.trellis.checkpoint.jdbc`.
 */
package dev.trellis.checkpoint.postgres.internal
