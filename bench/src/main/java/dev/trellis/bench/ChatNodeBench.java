package dev.trellis.bench;

import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.langchain4j.ChatActions;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.agent.AgentEvent;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of the chat nodes of {@code trellis-langchain4j} over calling a scripted model directly, built in Kotlin
 * ({@code chatNode}, {@code streamingChatNode}) and in Java ({@code ChatActions} in a {@code JavaGraph}).
 *
 * <p>Calls: a chain of {@link ChatWorkloads#CALLS} chat nodes against a chain of as many plain nodes calling the
 * model themselves; (chat − direct) / CALLS is the chat node's cost per call. Streaming: one streaming node of
 * {@link ChatWorkloads#TOKENS} tokens against a plain node emitting as many token events itself, both run with every
 * event collected; (streaming − emitting) / TOKENS is the cost per token beyond the event itself.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class ChatNodeBench {
    private final ConstantChatModel model = new ConstantChatModel();
    private final ConstantStreamingModel streaming = new ConstantStreamingModel(ChatWorkloads.TOKENS);
    private final State input = ChatWorkloads.input();
    private Graph chatChain;
    private Graph directChain;
    private Graph ioHopChain;
    private Graph javaChatChain;
    private Graph javaDirectChain;
    private Graph streamingNode;
    private Graph emittingNode;
    private Graph javaStreamingNode;
    private Graph javaEmittingNode;

    @Setup
    public void setUp() {
        chatChain = ChatWorkloads.INSTANCE.chatChain(model);
        directChain = ChatWorkloads.INSTANCE.directChain(model);
        ioHopChain = ChatWorkloads.INSTANCE.ioHopChain(model);
        javaChatChain = javaChain(true);
        javaDirectChain = javaChain(false);
        streamingNode = ChatWorkloads.INSTANCE.streamingNode(streaming);
        emittingNode = ChatWorkloads.INSTANCE.emittingNode();
        javaStreamingNode = JavaGraph.builder("java-streaming", ChatBenchState.INSTANCE)
            .blockingNode("write", ChatActions.streamingChat(streaming, ChatBenchState.INSTANCE.getAnswer(),
                s -> ChatWorkloads.messages))
            .start("write")
            .build();
        javaEmittingNode = JavaGraph.builder("java-emitting", ChatBenchState.INSTANCE)
            .blockingNode("write", ctx -> {
                StringBuilder text = new StringBuilder(ChatWorkloads.TOKENS);
                for (int i = 0; i < ChatWorkloads.TOKENS; i++) {
                    ctx.emit(new AgentEvent.Token("write", "t"));
                    text.append('t');
                }
                ctx.set(ChatBenchState.INSTANCE.getAnswer(), text.toString());
            })
            .start("write")
            .build();

        for (Graph g : new Graph[] {chatChain, directChain, ioHopChain, javaChatChain, javaDirectChain}) {
            Check.equal(g.getId() + " answer", "ok", ChatWorkloads.answer(TrellisWorkloads.invoke(g, input)));
        }
        for (Graph g : new Graph[] {streamingNode, emittingNode, javaStreamingNode, javaEmittingNode}) {
            // RunStarted, NodeStarted, TOKENS tokens, NodeCompleted, RunCompleted (and a checkpoint-free run)
            int events = TrellisWorkloads.runCollect(g, input);
            Check.equal(g.getId() + " events", true, events >= ChatWorkloads.TOKENS + 4);
        }
    }

    private Graph javaChain(boolean chatActions) {
        JavaGraph.Builder builder = JavaGraph.builder(chatActions ? "java-chat-chain" : "java-direct-chain",
            ChatBenchState.INSTANCE);
        for (int i = 0; i < ChatWorkloads.CALLS; i++) {
            if (chatActions) {
                builder.node("c" + i, ChatActions.chat(model, ChatBenchState.INSTANCE.getAnswer(), s -> ChatWorkloads.messages));
            } else {
                builder.node("c" + i, ctx -> ctx.set(ChatBenchState.INSTANCE.getAnswer(),
                    model.chat(ChatWorkloads.request()).aiMessage().text()));
            }
            if (i > 0) builder.edge("c" + (i - 1), "c" + i);
        }
        return builder.start("c0").build();
    }

    /** The scripted model alone, {@link ChatWorkloads#CALLS} calls (the floor of both chains). */
    @Benchmark
    public ChatResponse modelCalls() {
        ChatResponse last = null;
        for (int i = 0; i < ChatWorkloads.CALLS; i++) last = model.chat(ChatWorkloads.request());
        return last;
    }

    /** Kotlin: a chain of 100 {@code chatNode}s. */
    @Benchmark
    public RunResult chatNodeChain() {
        return TrellisWorkloads.invoke(chatChain, input);
    }

    /** Kotlin: a chain of 100 plain nodes calling the model themselves. */
    @Benchmark
    public RunResult directCallChain() {
        return TrellisWorkloads.invoke(directChain, input);
    }

    /** Kotlin: a chain of 100 plain nodes calling the model themselves on the IO pool, as a chat node does. */
    @Benchmark
    public RunResult ioHopChain() {
        return TrellisWorkloads.invoke(ioHopChain, input);
    }

    /**
     * Kotlin: the chain of 100 {@code chatNode}s run on {@code Dispatchers.Default} (a server's coroutine pool), where
     * the chat node's hop to the IO pool mostly stays on the same thread.
     */
    @Benchmark
    public RunResult chatNodeChainOnDefault() {
        return TrellisWorkloads.invoke(chatChain, input, ChatWorkloads.onDefault());
    }

    /** Kotlin: the chain of 100 plain nodes calling the model themselves, run on {@code Dispatchers.Default}. */
    @Benchmark
    public RunResult directCallChainOnDefault() {
        return TrellisWorkloads.invoke(directChain, input, ChatWorkloads.onDefault());
    }

    /** Kotlin: the chain of 100 plain nodes calling the model on the IO pool, run on {@code Dispatchers.Default}. */
    @Benchmark
    public RunResult ioHopChainOnDefault() {
        return TrellisWorkloads.invoke(ioHopChain, input, ChatWorkloads.onDefault());
    }

    /**
     * Kotlin: the chain of 100 {@code chatNode}s run on {@code Dispatchers.IO}, a pool allowed to block: the chat
     * node's call to the model then needs no hop, and (chat − direct) on IO is the node's own cost.
     */
    @Benchmark
    public RunResult chatNodeChainOnIo() {
        return TrellisWorkloads.invoke(chatChain, input, ChatWorkloads.onIo());
    }

    /** Kotlin: the chain of 100 plain nodes calling the model themselves, run on {@code Dispatchers.IO}. */
    @Benchmark
    public RunResult directCallChainOnIo() {
        return TrellisWorkloads.invoke(directChain, input, ChatWorkloads.onIo());
    }

    /** Java: a chain of 100 {@code node}s running {@code ChatActions.chat}. */
    @Benchmark
    public RunResult javaChatActionChain() {
        return TrellisWorkloads.invoke(javaChatChain, input);
    }

    /** Java: a chain of 100 {@code node}s calling the model themselves. */
    @Benchmark
    public RunResult javaDirectCallChain() {
        return TrellisWorkloads.invoke(javaDirectChain, input);
    }

    /** The streaming model alone, its tokens appended to a builder (the floor of the streaming rows). */
    @Benchmark
    public String modelStream() {
        StringBuilder text = new StringBuilder(ChatWorkloads.TOKENS);
        streaming.chat(ChatWorkloads.request(), new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String token) {
                text.append(token);
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {}

            @Override
            public void onError(Throwable error) {
                throw new IllegalStateException(error);
            }
        });
        return text.toString();
    }

    /** Kotlin: one {@code streamingChatNode} of 1,000 tokens, every event collected. */
    @Benchmark
    public int streamingChatNode() {
        return TrellisWorkloads.runCollect(streamingNode, input);
    }

    /** Kotlin: one plain node emitting 1,000 token events itself, every event collected. */
    @Benchmark
    public int emittingNode() {
        return TrellisWorkloads.runCollect(emittingNode, input);
    }

    /** Java: one {@code blockingNode} running {@code ChatActions.streamingChat}, 1,000 tokens, events collected. */
    @Benchmark
    public int javaStreamingChat() {
        return TrellisWorkloads.runCollect(javaStreamingNode, input);
    }

    /** Java: one {@code blockingNode} emitting 1,000 token events itself, every event collected. */
    @Benchmark
    public int javaEmittingNode() {
        return TrellisWorkloads.runCollect(javaEmittingNode, input);
    }
}
