package dev.trellis.javaapi;

import dev.trellis.runtime.RunEvent;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowPublisherVerification;

/** The Reactive Streams TCK against {@link TrellisRunner#resumeEvents}: a resumed run's events; see {@link TckRuns}. */
public class ResumeEventsTckTest extends FlowPublisherVerification<RunEvent> {
    public ResumeEventsTckTest() {
        super(new TestEnvironment(2_000, 200), TckRuns.GC_TIMEOUT_MILLIS);
    }

    @Override
    public Flow.Publisher<RunEvent> createFlowPublisher(long elements) {
        return TckRuns.resumed(elements);
    }

    /** Resuming a run the store does not have fails the stream with onError. */
    @Override
    public Flow.Publisher<RunEvent> createFailedFlowPublisher() {
        return TckRuns.resumeOfUnknownRun();
    }

    @Override
    public long maxElementsFromPublisher() {
        return Integer.MAX_VALUE;
    }

    /** Skips the rules that need a stream of fewer elements than any run publishes, and its completion. */
    @Override
    public void activePublisherTest(long elements, boolean completionSignalRequired, PublisherTestRun<RunEvent> body) throws Throwable {
        TckRuns.skipIfTooShort(elements, completionSignalRequired, TckRuns.RESUME_EVENTS);
        super.activePublisherTest(elements, completionSignalRequired, body);
    }
}
