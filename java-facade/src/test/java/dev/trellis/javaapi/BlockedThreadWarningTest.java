package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.runtime.RunEvent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.reactivestreams.FlowAdapters;

/** A {@code node} whose action blocks the run's thread past the threshold is reported: an event and a log line. */
class BlockedThreadWarningTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private Graph graph() {
        return JavaGraph.builder("blocking", s.schema)
            .node("slow", ctx -> {
                Thread.sleep(300); // blocking work in a node: what the warning is for
                ctx.set(s.log, List.of("slow"));
            })
            .blockingNode("proper", ctx -> {
                Thread.sleep(300); // the same work where it belongs: not reported
                ctx.set(s.log, List.of("proper"));
            })
            .start("slow")
            .edge("slow", "proper")
            .build();
    }

    @Test
    void aNodeThatBlocksIsReportedByAnEventNamingIt() throws Exception {
        Duration before = BlockedThreadWarning.getThreshold();
        BlockedThreadWarning.setThreshold(Duration.ofMillis(100));
        try {
            Fixtures.Recorder recorder = new Fixtures.Recorder();
            Trellis.runner(graph()).events(Map.of("question", "q")).subscribe(FlowAdapters.toFlowSubscriber(recorder));
            recorder.request(Long.MAX_VALUE);
            recorder.awaitDone();
            List<BlockedThreadWarning> warnings = recorder.events.stream()
                .filter(e -> e instanceof RunEvent.Custom)
                .map(e -> ((RunEvent.Custom) e).getPayload())
                .filter(p -> p instanceof BlockedThreadWarning)
                .map(p -> (BlockedThreadWarning) p)
                .toList();
            assertEquals(1, warnings.size(), warnings.toString());
            BlockedThreadWarning warning = warnings.get(0);
            assertEquals("slow", warning.getNodeId());
            assertEquals(1, warning.getExecution());
            assertTrue(warning.getBlockedFor().compareTo(Duration.ofMillis(100)) > 0, warning.toString());
            assertTrue(warning.toString().contains("blockingNode"), warning.toString());
            assertTrue(recorder.events.get(recorder.events.size() - 1) instanceof RunEvent.RunCompleted);
        } finally {
            BlockedThreadWarning.setThreshold(before);
        }
    }

    @Test
    void theThresholdMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> BlockedThreadWarning.setThreshold(Duration.ZERO));
        assertEquals(Duration.ofSeconds(1), BlockedThreadWarning.getThreshold());
    }
}
