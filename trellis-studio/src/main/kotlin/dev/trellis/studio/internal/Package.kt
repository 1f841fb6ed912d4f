/*
 * Package dev.trellis.studio.internal — the studio's server: Ktor routes and the versioned JSON API (`Routes.kt`,
 * `StudioApi.kt`), actions that go through the library's public API and the store's fencing (`StudioActions.kt`),
 * runs watched live and their server-sent events (`LiveRuns.kt`, `EventStream.kt`, `EventJson.kt`), checkpoint payloads
 * read as JSON, states and their diffs (`CheckpointPayload.kt`, `StateFold.kt`), and errors as HTTP answers
 * (`ApiException.kt`). Never writes store rows itself.
 *
 * May call: `timeline`, the runtime's and the checkpoint store's public APIs, Ktor.
 */
package dev.trellis.studio.internal
