/*
 * Package dev.trellis.testing — what the tests of every module share, never published for users: the check of a
 * module's API dump (`ApiDump.kt`), a clock moved by hand (`TestClock.kt`) and the PostgreSQL test database with a
 * schema per test (`TestPostgres.kt`), and child JVMs for the tests that kill or stop a process (`ChildJvm.kt`).
 *
 * May call: JDBC and the JDK only; used by tests alone.
 */
package dev.trellis.testing
