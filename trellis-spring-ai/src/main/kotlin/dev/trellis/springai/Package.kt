/*
 * Package dev.trellis.springai — agents on Spring AI models (`docs/spring.md`): chat and streaming nodes on a
 * `ChatModel` or a `ChatClient` (`ChatNodes.kt`, `ModelCalls.kt`, `SpringAiActions.kt` for Java), tools and tool calls
 * as map tasks (`Tools.kt`, `ToolNodes.kt`), a ReAct agent graph (`ReactAgent.kt`), the conversation in the state
 * (`StoredMessage.kt`, `StoredMessageSerializers.kt`, `Conversation.kt`) and token usage charged to budget meters
 * (`TokenMeters.kt`).
 *
 * May call: the runtime's public API, the Java facade's (for Java node actions only) and Spring AI.
 */
package dev.trellis.springai
