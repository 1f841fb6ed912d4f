package dev.trellis.javaapi;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Flow;
import org.testng.SkipException;

/**
 * The Trellis publishers the Reactive Streams TCK tests. A run publishes a fixed number of events besides the custom
 * events of its node: {@link #RUN_EVENTS} for a new run (RunStarted, NodeStarted, NodeCompleted and the terminal
 * one), {@link #RESUME_EVENTS} for a resumed one (and its CheckpointSaved). So a publisher of exactly n events exists
 * only for n at least that many. For smaller n the TCK gets a whole shortest run, which serves its rules that need
 * n elements and no completion; the rules that need a stream of exactly so few elements and then its completion are
 * skipped with {@link #tooShort} (each TCK class overrides {@code activePublisherTest} for this).
 */
final class TckRuns {
    private TckRuns() {}

    /** The events of a new run of {@link Fixtures#emitter} besides its payloads. */
    static final long RUN_EVENTS = 4;

    /** The events of a resumed run of {@link #resumed} besides its payloads. */
    static final long RESUME_EVENTS = 5;

    /**
     * How long rule 3.13 waits after a cancel before it checks that the publisher dropped its subscriber: the publisher
     * lets go once the cancelled run has unwound, which took more than a second on a loaded two-core machine.
     */
    static final long GC_TIMEOUT_MILLIS = 10_000;

    /** How many payloads a run needs to publish [elements] events when it publishes [fixed] events besides them. */
    static long payloads(long elements, long fixed) {
        return Math.max(elements, fixed) - fixed;
    }

    /** Whether a TCK rule needs a stream of exactly [elements] elements and its completion, which no run has. */
    static void skipIfTooShort(long elements, boolean completionSignalRequired, long fixed) {
        if (completionSignalRequired && elements < fixed) {
            throw new SkipException("Every Trellis run of this kind publishes at least " + fixed + " events, never exactly " + elements + ".");
        }
    }

    private static final InMemoryCheckpointStore STORE = new InMemoryCheckpointStore();

    /** Settings that save checkpoints of run [runId] (when the run ends) in a store shared by the TCK's runs. */
    static JavaRunOptions checkpointed(String runId) {
        return JavaRunOptions.builder().runId(runId).checkpointing(new Checkpointing(STORE, Checkpointing.Mode.ON_EXIT)).build();
    }

    /**
     * A runner whose every run fails before it starts (so its publishers fail with onError): its settings name a run
     * that already has checkpoints, which a new run must not reuse.
     */
    static TrellisRunner failing() {
        String runId = "tck-taken-" + UUID.randomUUID();
        Graph graph = Fixtures.emitter(0);
        expect(Status.COMPLETED, Trellis.runner(graph, checkpointed(runId)), runId);
        return Trellis.runner(graph, checkpointed(runId));
    }

    /**
     * The events of resuming, with an answer, a run that is interrupted (its node asks for input): exactly [elements]
     * events (at least {@link #RESUME_EVENTS}). Each call interrupts a new run; a run resumes once, so a second
     * subscription to the publisher fails with onError (the run already ended).
     */
    static Flow.Publisher<RunEvent> resumed(long elements) {
        long payloads = payloads(elements, RESUME_EVENTS);
        Fixtures.Schema s = new Fixtures.Schema();
        Graph graph = JavaGraph.builder("tck-resume", s.schema)
            .node("ask", ctx -> {
                ctx.interrupt("go?");
                for (long i = 0; i < payloads; i++) ctx.emit(i);
            })
            .start("ask")
            .build();
        String runId = "tck-resume-" + UUID.randomUUID();
        expect(Status.INTERRUPTED, Trellis.runner(graph, checkpointed(runId)), runId);
        return Trellis.runner(graph, checkpointed(null)).resumeEvents(runId, "go");
    }

    /** A resume publisher that fails with onError: the store has no such run. */
    static Flow.Publisher<RunEvent> resumeOfUnknownRun() {
        return Trellis.runner(Fixtures.emitter(0), checkpointed(null)).resumeEvents("tck-no-such-run-" + UUID.randomUUID());
    }

    private static void expect(Status status, TrellisRunner runner, String runId) {
        try {
            RunResult result = runner.invoke(Map.of());
            if (result.getStatus() != status) throw new AssertionError("run " + runId + " ended " + result.getStatus() + ", not " + status);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
