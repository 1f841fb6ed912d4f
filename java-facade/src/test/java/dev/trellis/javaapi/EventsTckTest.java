package dev.trellis.javaapi;

import dev.trellis.runtime.RunEvent;
import java.util.Map;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowPublisherVerification;

/** The Reactive Streams TCK against {@link TrellisRunner#events} (JDK {@code Flow}); see {@link ReactiveEventsTckTest}. */
public class EventsTckTest extends FlowPublisherVerification<RunEvent> {
    public EventsTckTest() {
        super(new TestEnvironment(2_000, 200), 1_000);
    }

    @Override
    public Flow.Publisher<RunEvent> createFlowPublisher(long elements) {
        if (elements >= 4) return Trellis.runner(Fixtures.emitter(elements - 4)).events(Map.of());
        return Truncated.flow(Trellis.runner(Fixtures.emitter(0)).events(Map.of()), elements);
    }

    @Override
    public Flow.Publisher<RunEvent> createFailedFlowPublisher() {
        return null; // a run's failure is an event (RunFailed), never onError
    }

    @Override
    public long maxElementsFromPublisher() {
        return Integer.MAX_VALUE;
    }
}
