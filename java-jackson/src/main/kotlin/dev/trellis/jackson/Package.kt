/*
 * Package dev.trellis.jackson — kotlinx serializers backed by Jackson 3 (`JacksonSerializer.kt`), so state keys can
 * hold Java records, enums and POJOs (`docs/java.md`).
 *
 * May call: Jackson and kotlinx.serialization; nothing of the runtime.
 */
package dev.trellis.jackson
