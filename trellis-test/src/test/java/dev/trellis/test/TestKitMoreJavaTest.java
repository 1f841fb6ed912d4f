package dev.trellis.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.trellis.graph.Graph;
import dev.trellis.langchain4j.ToolFunction;
import dev.trellis.runtime.RunEvent;
import dev.trellis.test.context.RecordedRun;
import dev.trellis.test.context.StoreKind;
import dev.trellis.test.context.TrellisTestContext;
import dev.trellis.test.eval.EvalComparison;
import dev.trellis.test.eval.EvalOutput;
import dev.trellis.test.eval.EvalReport;
import dev.trellis.test.eval.EvalSet;
import dev.trellis.test.eval.EvalTarget;
import dev.trellis.test.eval.Evaluation;
import dev.trellis.test.eval.Scorers;
import dev.trellis.test.guide.Triage;
import dev.trellis.test.guide.TriageGuideTestKt;
import dev.trellis.test.model.ScriptedAnswer;
import dev.trellis.test.model.ScriptedChatModel;
import dev.trellis.test.model.ScriptedStreamingChatModel;
import dev.trellis.test.replay.Cassette;
import dev.trellis.test.replay.CassetteMode;
import dev.trellis.test.replay.RecordedFailureException;
import dev.trellis.test.replay.Redaction;
import dev.trellis.test.trajectory.Trajectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** More of the kit from Java: streaming scripts, trajectories from events and stores, tools on a cassette, scorers. */
class TestKitMoreJavaTest {
    @TempDir
    Path dir;

    private final ScriptedChatModel triage = ScriptedChatModel.builder()
        .whenPrompt("Classify", ScriptedAnswer.text("tech"))
        .whenPrompt("Reply", ScriptedAnswer.text("Restart it."))
        .build();

    @Test
    void aStreamingScriptStreamsItsTokens() {
        ScriptedStreamingChatModel model = ScriptedChatModel.builder()
            .answer(ScriptedAnswer.tokens("a", "b").withUsage(3, 2))
            .buildStreaming();
        List<String> tokens = new ArrayList<>();
        ChatResponse[] done = new ChatResponse[1];
        model.chat(ChatRequest.builder().messages(UserMessage.from("go")).build(), new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partialResponse) {
                tokens.add(partialResponse);
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done[0] = response;
            }

            @Override
            public void onError(Throwable error) {
                throw new AssertionError(error);
            }
        });
        assertEquals(List.of("a", "b"), tokens);
        assertEquals("ab", done[0].aiMessage().text());
        assertEquals(2, done[0].tokenUsage().outputTokenCount());
        model.assertAllAnswersUsed();
    }

    @Test
    void trajectoriesFromEventsAndFromTheStore() throws IOException {
        try (TrellisTestContext trellis = TrellisTestContext.open(StoreKind.MEMORY)) {
            Graph graph = TriageGuideTestKt.triageGraph(triage);
            trellis.run(graph, Triage.INSTANCE.stateOf(Map.of("ticket", "Wifi down")));
            RecordedRun run = trellis.getRuns().get(0);
            List<RunEvent> events = run.getEvents();
            Trajectory.of(events).assertNodesInOrder("classify", "reply");
            Trajectory.ofBlocking(events, graph, trellis.getStore()).assertStateAfter("classify", Triage.INSTANCE.getCategory(), "tech");
            Trajectory.fromStoreBlocking(graph, trellis.getStore(), events.get(0).getRunId()).assertNodeCount("reply", 1);
            List<Path> pages = trellis.writeTimelines(dir, "triage");
            assertTrue(Files.readString(pages.get(0)).contains("classify"));
        }
    }

    @Test
    void toolsOnACassetteAndRedaction() throws Exception {
        Path file = dir.resolve("tools.json");
        ToolFunction lookup = arguments -> "found " + arguments;
        try (Cassette cassette = Cassette.open(file, CassetteMode.RECORD)) {
            assertEquals("found {\"q\":1}", cassette.tool("lookup", lookup).execute("{\"q\":1}"));
            ToolFunction failing = arguments -> {
                throw new IllegalStateException("down");
            };
            assertThrows(IllegalStateException.class, () -> cassette.tool("broken", failing).execute("{}"));
        }
        try (Cassette cassette = Cassette.open(file, CassetteMode.parse("replay"))) {
            assertEquals("found {\"q\":1}", cassette.tool("lookup", null).execute("{\"q\":1}"));
            RecordedFailureException error = assertThrows(RecordedFailureException.class,
                () -> cassette.tool("broken", null).execute("{}"));
            assertEquals("java.lang.IllegalStateException", error.getType());
        }
        Redaction redaction = Redaction.DEFAULT.value("s3cret").pattern("acct-(\\d+)");
        assertEquals("acct-<redacted> <redacted> password=<redacted>", redaction.apply("acct-42 s3cret password=hunter2"));
        assertEquals(CassetteMode.AUTO, CassetteMode.parse(""));
    }

    @Test
    void scorersReportsAndComparisons() throws Exception {
        EvalSet set = EvalSet.parse("mixed", String.join("\n",
            "{\"id\": \"n\", \"input\": {}, \"expect\": {\"number\": 10}, \"tags\": [\"num\"]}",
            "{\"id\": \"j\", \"input\": {}, \"expect\": {\"output\": \"OK\"}}"));
        ScriptedChatModel judge = ScriptedChatModel.builder().whenPrompt("", ScriptedAnswer.text("SCORE: 8\nfine")).build();
        EvalTarget target = EvalTarget.blocking(c -> new EvalOutput(c.getId().equals("n") ? "about 10.4" : "{\"ok\": true}"));
        EvalReport report = new Evaluation(set, target)
            .scorers(Scorers.numeric(0.5), Scorers.exact(true), Scorers.llmJudge(judge, "Be right."))
            .run();
        assertTrue(Scorers.jsonSchema("{\"type\": \"object\"}").score(set.getCases().get(1), new EvalOutput("{\"ok\": 1}"))
            .getPassed());
        assertTrue(report.getCases().get(0).getPassed(), report.toTable());
        assertFalse(report.getCases().get(1).getPassed(), report.toTable());
        assertEquals(1, set.tagged("num").getCases().size());

        Path json = report.writeJson(dir.resolve("mixed.json"));
        report.writeHtml(dir.resolve("mixed.html"));
        EvalReport better = new Evaluation(set, EvalTarget.blocking(c -> new EvalOutput("10 OK")))
            .scorers(Scorers.numeric(0.5))
            .run();
        EvalComparison comparison = EvalComparison.of(EvalReport.readJson(json), better);
        // n's score rose from 0.9 (the judge's 0.8 counted) to 1; j now passes.
        assertEquals(List.of("n", "j"), comparison.getImprovements().stream().map(EvalComparison.Change::getId).toList());
        assertTrue(comparison.getRegressions().isEmpty());
        comparison.assertNoRegressions();
    }
}
