package dev.trellis.javaapi;

import dev.trellis.runtime.RunEvent;
import java.util.Map;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK against {@link TrellisRunner#reactiveEvents}. A run of {@link Fixtures#emitter}
 * has exactly {@code payloads + 4} events, so {@code createPublisher(n)} is a whole run for n >= 4; smaller
 * requests take the first n events of a run (which exercises cancelling the run mid-way).
 */
public class ReactiveEventsTckTest extends PublisherVerification<RunEvent> {
    public ReactiveEventsTckTest() {
        super(new TestEnvironment(2_000, 200), 1_000);
    }

    @Override
    public Publisher<RunEvent> createPublisher(long elements) {
        if (elements >= 4) return Trellis.runner(Fixtures.emitter(elements - 4)).reactiveEvents(Map.of());
        return Truncated.reactive(Trellis.runner(Fixtures.emitter(0)).reactiveEvents(Map.of()), elements);
    }

    @Override
    public Publisher<RunEvent> createFailedPublisher() {
        return null; // a run's failure is an event (RunFailed), never onError
    }

    @Override
    public long maxElementsFromPublisher() {
        return Integer.MAX_VALUE;
    }
}
