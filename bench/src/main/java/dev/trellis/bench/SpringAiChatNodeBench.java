package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.runtime.RunResult;
import dev.trellis.springai.SpringAiActions;
import java.util.List;
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
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;

/**
 * The cost of the chat action of {@code trellis-spring-ai} ({@code SpringAiActions.chat} in a {@code blockingNode})
 * over a plain blocking node that calls the same scripted Spring AI model itself and writes its answer: a chain of
 * {@link ChatWorkloads#CALLS} nodes each; (chat − direct) / CALLS is the Spring AI chat node's cost per call.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class SpringAiChatNodeBench {
    /** A scripted Spring AI model that answers at once with the same response, allocating nothing per call. */
    static final class ConstantSpringAiModel implements ChatModel {
        private final ChatResponse response = new ChatResponse(List.of(new Generation(new AssistantMessage("ok"))));

        @Override
        public ChatResponse call(Prompt prompt) {
            return response;
        }
    }

    private static final List<Message> MESSAGES = List.of(new UserMessage("Why is the sky blue?"));

    private final ConstantSpringAiModel model = new ConstantSpringAiModel();
    private final State input = ChatWorkloads.input();
    private Graph chatChain;
    private Graph directChain;

    @Setup
    public void setUp() {
        chatChain = chain("spring-ai-chat", true);
        directChain = chain("spring-ai-direct", false);
        for (Graph g : new Graph[] {chatChain, directChain}) {
            Check.equal(g.getId() + " answer", "ok", ChatWorkloads.answer(TrellisWorkloads.invoke(g, input)));
        }
    }

    private Graph chain(String id, boolean chatAction) {
        JavaGraph.Builder builder = JavaGraph.builder(id, ChatBenchState.INSTANCE);
        for (int i = 0; i < ChatWorkloads.CALLS; i++) {
            String node = "c" + i;
            if (chatAction) {
                builder.blockingNode(node, SpringAiActions.chat(model, ChatBenchState.INSTANCE.getAnswer(), s -> MESSAGES));
            } else {
                builder.blockingNode(node, ctx -> ctx.set(ChatBenchState.INSTANCE.getAnswer(),
                    model.call(new Prompt(MESSAGES)).getResult().getOutput().getText()));
            }
            if (i > 0) builder.edge("c" + (i - 1), node);
        }
        return builder.start("c0").build();
    }

    /** {@link ChatWorkloads#CALLS} Spring AI chat actions in a chain. */
    @Benchmark
    public RunResult springAiChatChain() {
        return TrellisWorkloads.invoke(chatChain, input);
    }

    /** {@link ChatWorkloads#CALLS} plain blocking nodes calling the model themselves. */
    @Benchmark
    public RunResult springAiDirectChain() {
        return TrellisWorkloads.invoke(directChain, input);
    }
}
