package dev.trellis.springai

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.JavaNodeScope
import dev.trellis.javaapi.NodeAction
import dev.trellis.runtime.agent.AgentEvent
import kotlinx.coroutines.runBlocking
import org.springframework.ai.chat.client.ChatClient
import org.springframework.ai.chat.messages.Message
import org.springframework.ai.chat.model.ChatModel
import org.springframework.ai.chat.model.ChatResponse
import org.springframework.ai.chat.model.StreamingChatModel
import org.springframework.ai.chat.prompt.Prompt
import java.util.function.Function

/**
 * Chat nodes for a Java `JavaGraph`: actions to declare with `blockingNode` (a model call blocks its thread, which
 * the blocking node's executor provides and interrupts when the run is cancelled).
 *
 * ```java
 * builder.blockingNode("answer",
 *     SpringAiActions.chat(chatModel, answer, s -> List.of(new UserMessage(s.get(question)))));
 * ```
 */
public object SpringAiActions {
    /**
     * Sends the messages [messages] builds from the state to [model] and writes the answer's text to [output]; the
     * response's tokens are charged to [meters].
     */
    @JvmStatic
    @JvmOverloads
    public fun chat(
        model: ChatModel,
        output: StateKey<String>,
        messages: Function<State, List<Message>>,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = chat(ModelSource.OfModel(model), output, messages, meters)

    /** As [chat] over a `ChatModel`, through [client] (its defaults and advisors apply). */
    @JvmStatic
    @JvmOverloads
    public fun chat(
        client: ChatClient,
        output: StateKey<String>,
        messages: Function<State, List<Message>>,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = chat(ModelSource.OfClient(client), output, messages, meters)

    /**
     * Streams the answer of [model]: the text of each chunk becomes a custom event of the node
     * (`AgentEvent.Token(nodeId, text)`) as it arrives, then the whole text is written to [output]. A slow subscriber
     * slows the stream down (the node's demand on the model's `Flux` is at most 64 chunks ahead); a cancelled run
     * interrupts the node's thread, which cancels the subscription and so the model's stream. The last usage the
     * stream reports is charged to [meters].
     */
    @JvmStatic
    @JvmOverloads
    public fun streamingChat(
        model: StreamingChatModel,
        output: StateKey<String>,
        messages: Function<State, List<Message>>,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = streamingChat(ModelSource.OfModel(model), output, messages, meters)

    /** As [streamingChat] over a `StreamingChatModel`, through [client] (its defaults and advisors apply). */
    @JvmStatic
    @JvmOverloads
    public fun streamingChat(
        client: ChatClient,
        output: StateKey<String>,
        messages: Function<State, List<Message>>,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = streamingChat(ModelSource.OfClient(client), output, messages, meters)

    private fun chat(
        source: ModelSource,
        output: StateKey<String>,
        messages: Function<State, List<Message>>,
        meters: TokenMeters,
    ): NodeAction = NodeAction { context ->
        val response = source.call(Prompt(messages.apply(context.state)))
        write(context, response, output, meters)
    }

    private fun streamingChat(
        source: ModelSource,
        output: StateKey<String>,
        messages: Function<State, List<Message>>,
        meters: TokenMeters,
    ): NodeAction = NodeAction { context ->
        val prompt = Prompt(messages.apply(context.state))
        // runBlocking: an interrupt of this thread (the run cancelled) cancels the collection, and so the stream.
        val response = runBlocking {
            source.streamSuspending(prompt) { context.emit(AgentEvent.Token(context.nodeId, it)) }
        }
        write(context, response, output, meters)
    }

    private fun write(context: JavaNodeScope, response: ChatResponse, output: StateKey<String>, meters: TokenMeters) {
        meters.charge(response, context::charge)
        context.set(output, response.answerOf(context.nodeId).text.orEmpty())
    }
}
