/*
 * Package dev.trellis.studio.timeline — a run as a timeline (`RunTimeline.kt`), built from its events
 * (`EventTimeline.kt`) or its stored checkpoints (`StoredTimeline.kt`), one lane per execution path (map tasks and
 * child runs apart), and drawn as a self-contained HTML page (`TimelineHtml.kt`, `TimelineViews.kt`, the graph in
 * `GraphSvg.kt` and `StatusMermaid.kt`). The samples' `--timeline` page and the studio's run page share it.
 *
 * May call: the runtime's and the checkpoint store's public APIs.
 */
package dev.trellis.studio.timeline
