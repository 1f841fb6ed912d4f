/*
 * Package dev.trellis.samples — runnable samples and the `trellis-samples` command line (`Main.kt`): one file per
 * sample (`*Sample.kt`, the Java one in `src/main/java`), and what they share to show a run on the console or as JSON
 * (`ConsoleView.kt`, `JsonEvents.kt`, `Summary.kt`, `TimelinePages.kt`, `SampleTelemetry.kt`).
 *
 * May call: every published module's public API, as a user would.
 */
package dev.trellis.samples
