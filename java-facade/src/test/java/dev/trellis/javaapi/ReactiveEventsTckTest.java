package dev.trellis.javaapi;

import dev.trellis.runtime.RunEvent;
import java.util.Map;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/** The Reactive Streams TCK against {@link TrellisRunner#reactiveEvents}; see {@link TckRuns}. */
public class ReactiveEventsTckTest extends PublisherVerification<RunEvent> {
    public ReactiveEventsTckTest() {
        super(new TestEnvironment(2_000, 200), TckRuns.GC_TIMEOUT_MILLIS);
    }

    @Override
    public Publisher<RunEvent> createPublisher(long elements) {
        return Trellis.runner(Fixtures.emitter(TckRuns.payloads(elements, TckRuns.RUN_EVENTS))).reactiveEvents(Map.of());
    }

    /** A run that cannot start (its run id already has checkpoints) fails the stream with onError. */
    @Override
    public Publisher<RunEvent> createFailedPublisher() {
        return TckRuns.failing().reactiveEvents(Map.of());
    }

    @Override
    public long maxElementsFromPublisher() {
        return Integer.MAX_VALUE;
    }

    /** Skips the rules that need a stream of fewer elements than any run publishes, and its completion. */
    @Override
    public void activePublisherTest(long elements, boolean completionSignalRequired, PublisherTestRun<RunEvent> body) throws Throwable {
        TckRuns.skipIfTooShort(elements, completionSignalRequired, TckRuns.RUN_EVENTS);
        super.activePublisherTest(elements, completionSignalRequired, body);
    }
}
