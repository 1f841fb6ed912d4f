/*
 * Package dev.trellis.studio — Trellis Studio, a local web app over any checkpoint store (`docs/studio.md`): the one
 * public entry point (`TrellisStudio.kt`: start it from Kotlin or Java, register graphs, start runs it can watch live).
 *
 * May call: `internal` (the server, its JSON API and actions), `timeline`, and the runtime's public API.
 */
package dev.trellis.studio
