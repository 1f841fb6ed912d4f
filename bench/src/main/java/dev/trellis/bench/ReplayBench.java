package dev.trellis.bench;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.trellis.test.replay.Cassette;
import dev.trellis.test.replay.CassetteMode;
import dev.trellis.test.replay.Redaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What replaying a cassette ({@code trellis-test}) costs per model call: {@link #CALLS} calls of a typical chat
 * request (a system prompt, a user prompt of a few hundred characters) answered from a loaded cassette, against as
 * many calls of a model that answers at once. (replay − direct) is the replay's cost per call: matching the request
 * (rendering and redacting it) and rebuilding the recorded response. Loading the file (once per test in real use,
 * once per invocation here) is not measured.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class ReplayBench {
    static final int CALLS = 1000;

    private final ChatRequest[] requests = new ChatRequest[CALLS];
    private final ChatModel direct = new ChatModel() {
        @Override
        public ChatResponse doChat(ChatRequest request) {
            return ChatResponse.builder().aiMessage(AiMessage.from("an answer of a few words")).build();
        }
    };
    private Path file;
    private ChatModel replaying;

    @Setup(Level.Trial)
    public void record() throws IOException {
        file = Files.createTempFile("trellis-replay-bench", ".json");
        String context = "Some notes the graph gathered earlier in the run, ".repeat(6);
        for (int i = 0; i < CALLS; i++) {
            requests[i] = ChatRequest.builder().messages(
                SystemMessage.from("You answer questions about the notes, briefly."),
                UserMessage.from(context + "Question " + i + ": what do the notes say?")).build();
        }
        try (Cassette cassette = Cassette.open(file, CassetteMode.RECORD)) {
            ChatModel recording = cassette.chatModel(direct);
            for (ChatRequest request : requests) recording.chat(request);
        }
    }

    /**
     * A fresh cassette per invocation (each recorded call is replayed once, so one invocation uses one up); not
     * measured, and negligible per invocation of CALLS calls.
     */
    @Setup(Level.Invocation)
    public void load() {
        replaying = Cassette.open(file, CassetteMode.REPLAY, Redaction.DEFAULT, false).chatModel(null);
    }

    @TearDown(Level.Trial)
    public void delete() throws IOException {
        Files.deleteIfExists(file);
    }

    /** The baseline: CALLS calls of a model that answers at once. */
    @Benchmark
    @OperationsPerInvocation(CALLS)
    public int direct() {
        int length = 0;
        for (ChatRequest request : requests) length += direct.chat(request).aiMessage().text().length();
        return length;
    }

    /** CALLS calls answered from the cassette. */
    @Benchmark
    @OperationsPerInvocation(CALLS)
    public int replay() {
        int length = 0;
        for (ChatRequest request : requests) length += replaying.chat(request).aiMessage().text().length();
        return length;
    }
}
