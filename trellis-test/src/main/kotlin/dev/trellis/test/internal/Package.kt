/*
 * Package dev.trellis.test.internal — what the kit's packages share and users do not see: test stores and their
 * clean-up (`TestStore.kt`), prompts as text (`Prompts.kt`), line diffs for failure messages (`LineDiff.kt`) and the
 * run timeline pages written for a failing test (`Timelines.kt`, `TimelineFiles.kt`).
 *
 * May call: the studio's timeline, the stores and the runtime's public API.
 */
package dev.trellis.test.internal
