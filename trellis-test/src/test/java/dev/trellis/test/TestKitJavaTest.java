package dev.trellis.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.langchain4j.ChatActions;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import dev.trellis.test.context.StoreKind;
import dev.trellis.test.context.TrellisTestContext;
import dev.trellis.test.eval.EvalOutput;
import dev.trellis.test.eval.EvalReport;
import dev.trellis.test.eval.EvalSet;
import dev.trellis.test.eval.EvalTarget;
import dev.trellis.test.eval.EvalThresholdException;
import dev.trellis.test.eval.Evaluation;
import dev.trellis.test.eval.Score;
import dev.trellis.test.eval.Scorer;
import dev.trellis.test.eval.Scorers;
import dev.trellis.test.junit.TrellisTest;
import dev.trellis.test.model.ScriptedAnswer;
import dev.trellis.test.model.ScriptedChatModel;
import dev.trellis.test.model.UnscriptedCallException;
import dev.trellis.test.replay.Cassette;
import dev.trellis.test.replay.CassetteMismatchException;
import dev.trellis.test.replay.CassetteMode;
import dev.trellis.test.trajectory.Trajectory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/** The kit from Java: scripted models, a cassette, trajectories of a @TrellisTest context, an evaluation. */
@TrellisTest(store = StoreKind.SQLITE)
class TestKitJavaTest {
    private final StateSchema schema = new StateSchema("java-qa");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");

    private Graph graph(ChatModel model) {
        return JavaGraph.builder("java-qa", schema)
            .blockingNode("answer", ChatActions.chat(model, answer, s -> List.of(UserMessage.from(s.get(question)))))
            .blockingNode("done", ctx -> { })
            .start("answer")
            .edge("answer", "done")
            .build();
    }

    @Test
    void scriptedModelsAnswerInOrderAndByPrompt() {
        ScriptedChatModel model = ScriptedChatModel.builder()
            .whenPrompt("weather", request -> ScriptedAnswer.toolCall("temperature", "{\"city\":\"Oslo\"}"))
            .answer(ScriptedAnswer.text("first"), ScriptedAnswer.json("{\"ok\":true}"))
            .build();
        ChatRequest hello = ChatRequest.builder().messages(UserMessage.from("hello")).build();
        assertEquals("first", model.chat(hello).aiMessage().text());
        assertEquals("{\"ok\":true}", model.chat(hello).aiMessage().text());
        ChatRequest weather = ChatRequest.builder().messages(UserMessage.from("weather?")).build();
        assertEquals("temperature", model.chat(weather).aiMessage().toolExecutionRequests().get(0).name());
        UnscriptedCallException error = assertThrows(UnscriptedCallException.class, () -> model.chat(hello));
        assertEquals("hello", error.getPrompt());
        assertEquals(List.of("hello", "hello", "weather?", "hello"), model.getPrompts());
    }

    @Test
    void aTestContextRunsInVirtualTimeAndGivesTheTrajectory(TrellisTestContext trellis) {
        assertEquals(StoreKind.SQLITE, trellis.getStoreKind());
        RunResult result = trellis.run(graph(ScriptedChatModel.of("Paris")), schema.stateOf(Map.of("question", "Capital?")));
        assertEquals(Status.COMPLETED, result.getStatus());
        Trajectory trajectory = trellis.trajectory()
            .assertNodes("answer", "done")
            .assertNodeCount("answer", 1)
            .assertFinalState(answer, "Paris")
            .assertStateAfter("answer", answer, "Paris");
        AssertionFailedError failure = assertThrows(AssertionFailedError.class, () -> trajectory.assertNodes("done"));
        assertTrue(failure.getMessage().contains("Expected: [done]"), failure.getMessage());
        assertSame(trajectory, trajectory.assertNodesInAnyOrder("done", "answer"));
    }

    @Test
    void aCassetteRecordsAndReplays(@TempDir Path dir, TrellisTestContext trellis) {
        Path file = dir.resolve("java.json");
        try (Cassette cassette = Cassette.open(file, CassetteMode.RECORD)) {
            trellis.run(graph(cassette.chatModel(ScriptedChatModel.of("Paris"))), schema.stateOf(Map.of("question", "Capital?")));
        }
        try (Cassette cassette = Cassette.open(file, CassetteMode.REPLAY)) {
            RunResult replayed = trellis.run(graph(cassette.chatModel(null)), schema.stateOf(Map.of("question", "Capital?")));
            assertEquals("Paris", replayed.getState().get(answer));
        }
        Cassette changed = Cassette.open(file, CassetteMode.REPLAY, dev.trellis.test.replay.Redaction.DEFAULT, false);
        RunResult failed = trellis.run(graph(changed.chatModel(null)), schema.stateOf(Map.of("question", "Capital of Italy?")));
        assertEquals(Status.FAILED, failed.getStatus());
        assertTrue(failed.getError() instanceof CassetteMismatchException);
        assertTrue(failed.getError().getMessage().contains("+ user: Capital of Italy?"), failed.getError().getMessage());
    }

    @Test
    void anEvaluationWithABlockingTargetAndACustomScorer() {
        EvalSet set = EvalSet.parse("java", String.join("\n",
            "{\"id\": \"a\", \"input\": {\"question\": \"Capital of France?\"}, \"expect\": {\"contains\": \"Paris\"}}",
            "{\"id\": \"b\", \"input\": {\"question\": \"Capital of Italy?\"}, \"expect\": {\"contains\": \"Rome\"}}"));
        ScriptedChatModel model = ScriptedChatModel.builder()
            .whenPrompt("France", ScriptedAnswer.text("Paris"))
            .whenPrompt("Italy", ScriptedAnswer.text("Milan"))
            .build();
        Scorer shortAnswer = Scorer.of("short", (c, output) ->
            output.getText().length() < 10 ? Score.pass("short") : Score.fail("too long"));
        EvalReport report = new Evaluation(set, EvalTarget.blocking(c -> new EvalOutput(
                model.chat(ChatRequest.builder().messages(UserMessage.from(c.input("question"))).build()).aiMessage().text())))
            .scorers(Scorers.contains(), shortAnswer)
            .concurrency(2)
            .run();
        assertEquals(0.5, report.getPassRate());
        assertTrue(report.toTable().contains("b     FAIL"), report.toTable());
        EvalThresholdException error = assertThrows(EvalThresholdException.class, () -> report.assertPassRate(1.0));
        assertTrue(error.getMessage().contains("b: contains: missing [Rome]"), error.getMessage());
    }
}
