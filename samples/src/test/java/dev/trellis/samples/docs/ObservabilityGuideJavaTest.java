package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import dev.trellis.studio.timeline.RunTimeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Java timeline example of {@code docs/observability.md}, as the guide shows it, run and checked. */
class ObservabilityGuideJavaTest {
    @AfterEach
    void removeThePage() throws Exception {
        Files.deleteIfExists(Path.of("run.html"));
    }

    @Test
    void aRunsTimelinePageIsWrittenFromItsResultAndEvents() throws Exception {
        StateSchema schema = new StateSchema("research");
        StateKey<String> notes = Keys.of(schema, "notes", String.class, "");
        Graph graph = JavaGraph.builder("research", schema)
            .node("search", ctx -> ctx.set(notes, "notes"))
            .start("search")
            .build();
        TrellisRunner runner = Trellis.runner(graph);
        Map<String, Object> input = Map.of();

        List<RunEvent> events = new ArrayList<>();
        RunResult result = runner.start(input, events::add).result().join();
        RunTimeline.of(graph, result, events).writeHtml(Path.of("run.html"));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertTrue(Files.readString(Path.of("run.html")).contains("data-node=\"search\""));
    }
}
