/*
 * Package dev.trellis.javaapi.internal — how the Java API becomes the Kotlin one: node bodies (`NodeBodies.kt`,
 * `NodeExecutors.kt`), declarations (`Declarations.kt`), interceptors (`Interceptors.kt`), events as publishers
 * (`Emitter.kt`), keys' codecs (`KeyCodecs.kt`, `JacksonCodecs.kt`, `JavaDoubleSerializer.kt`, `ReadableTypes.kt`) and
 * adapters of agents and stores (`AgentAdapter.kt`, `StoreAdapters.kt`).
 *
 * May call: the runtime's public API; used by `dev.trellis.javaapi` only.
 */
package dev.trellis.javaapi.internal
