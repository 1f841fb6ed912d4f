package dev.trellis.javaapi;

import dev.trellis.runtime.RunEvent;
import java.util.Map;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowPublisherVerification;

/** The Reactive Streams TCK against {@link TrellisRunner#events} (JDK {@code Flow}); see {@link TckRuns}. */
public class EventsTckTest extends FlowPublisherVerification<RunEvent> {
    public EventsTckTest() {
        super(new TestEnvironment(2_000, 200), TckRuns.GC_TIMEOUT_MILLIS);
    }

    @Override
    public Flow.Publisher<RunEvent> createFlowPublisher(long elements) {
        return Trellis.runner(Fixtures.emitter(TckRuns.payloads(elements, TckRuns.RUN_EVENTS))).events(Map.of());
    }

    /** A run that cannot start (its run id already has checkpoints) fails the stream with onError. */
    @Override
    public Flow.Publisher<RunEvent> createFailedFlowPublisher() {
        return TckRuns.failing().events(Map.of());
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
