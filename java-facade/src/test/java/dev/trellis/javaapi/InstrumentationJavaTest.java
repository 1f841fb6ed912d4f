package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunInstrumentation;
import dev.trellis.runtime.RunOptions;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import kotlin.coroutines.CoroutineContext;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlin.jvm.functions.Function1;
import kotlinx.coroutines.flow.Flow;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.FlowAdapters;

/** {@code JavaRunOptions.instrumentation}: every run a runner starts, resumes or streams goes through it, with any store. */
class InstrumentationJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @TempDir
    Path dir;

    /** Records what it was asked to instrument and on which thread runs were started. */
    static final class Recording implements RunInstrumentation {
        final List<String> runs = new CopyOnWriteArrayList<>();
        final List<String> callers = new CopyOnWriteArrayList<>();

        @Override
        public @NotNull CoroutineContext callerContext() {
            callers.add(Thread.currentThread().getName());
            return EmptyCoroutineContext.INSTANCE;
        }

        @Override
        public @NotNull Flow<RunEvent> instrument(
            @NotNull Graph graph,
            @NotNull RunOptions options,
            @Nullable String resumedRunId,
            @NotNull Function1<? super RunOptions, ? extends Flow<? extends RunEvent>> run
        ) {
            runs.add(graph.getId() + (resumedRunId == null ? "" : " resumes " + resumedRunId));
            @SuppressWarnings("unchecked")
            Flow<RunEvent> events = (Flow<RunEvent>) run.invoke(options);
            return events;
        }
    }

    private Graph approval() {
        return JavaGraph.builder("approval", s.schema)
            .node("draft", ctx -> ctx.set(s.log, List.of("draft")))
            .blockingNode("approve", ctx -> {
                String answer = ctx.interrupt("Publish?");
                if (answer.equals("boom")) throw new IllegalStateException("boom");
                ctx.set(s.log, List.of("approved " + answer));
            })
            .start("draft")
            .edge("draft", "approve")
            .build();
    }

    @Test
    void everyKindOfCallGoesThroughTheInstrumentationWithASqliteStore() throws Exception {
        Recording recording = new Recording();
        try (SqliteCheckpointStore store = new SqliteCheckpointStore(dir.resolve("runs.db"))) {
            JavaRunOptions settings = JavaRunOptions.builder()
                .checkpointing(new Checkpointing(store))
                .instrumentation(recording)
                .build();
            assertTrue(settings.getInstrumentation().isPresent());
            TrellisRunner runner = Trellis.runner(approval(), settings);
            Map<String, Object> input = Map.of("question", "q");

            RunResult first = runner.invokeAsync(input).get(10, TimeUnit.SECONDS);
            assertEquals(Status.INTERRUPTED, first.getStatus());
            assertEquals(List.of(Thread.currentThread().getName()), recording.callers);
            RunResult second = runner.invoke(input);
            RunResult done = runner.resumeAsync(first.getRunId(), "yes").get(10, TimeUnit.SECONDS);
            assertEquals(Status.COMPLETED, done.getStatus());
            assertEquals(List.of("draft", "approved yes"), done.getState().get(s.log));

            Fixtures.Recorder events = new Fixtures.Recorder();
            runner.resumeEvents(second.getRunId(), "boom").subscribe(FlowAdapters.toFlowSubscriber(events));
            events.request(Long.MAX_VALUE);
            events.awaitDone();
            assertInstanceOf(RunEvent.RunFailed.class, events.events.get(events.events.size() - 1));

            RunResult third = runner.invoke(input);
            CompletionException failed = assertThrows(CompletionException.class,
                () -> runner.resumeAsync(third.getRunId(), "boom").join());
            GraphRunException error = assertInstanceOf(GraphRunException.class, failed.getCause());
            assertEquals("boom", Failures.cause(error).getMessage());

            assertEquals(List.of(
                "approval", "approval", "approval resumes " + first.getRunId(),
                "approval resumes " + second.getRunId(), "approval", "approval resumes " + third.getRunId()),
                recording.runs);
        }
    }

    @Test
    void withoutInstrumentationNothingIsCalled() {
        assertTrue(JavaRunOptions.DEFAULT.getInstrumentation().isEmpty());
    }
}
