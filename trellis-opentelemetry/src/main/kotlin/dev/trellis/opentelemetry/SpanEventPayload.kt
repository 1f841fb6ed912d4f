package dev.trellis.opentelemetry

import io.opentelemetry.api.common.Attributes

/**
 * A payload a node `emit`s that also becomes an event of the node's span when the run is traced
 * ([TrellisTelemetry]); other payloads are not put on spans (they may be large or private).
 *
 * ```kotlin
 * class TokensUsed(val tokens: Long) : SpanEventPayload {
 *     override fun spanEventName() = "llm.tokens"
 *     override fun spanEventAttributes(): Attributes = Attributes.of(AttributeKey.longKey("tokens"), tokens)
 * }
 * ```
 */
public interface SpanEventPayload {
    /** The span event's name. */
    public fun spanEventName(): String

    /** The span event's attributes; none by default. */
    public fun spanEventAttributes(): Attributes = Attributes.empty()
}
