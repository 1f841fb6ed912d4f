package dev.trellis.javaapi;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.runtime.RunEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** Graphs and helpers shared by the facade's tests. */
final class Fixtures {
    static final Duration WAIT = Duration.ofSeconds(10);

    private Fixtures() {}

    /** A schema with a count, an appending log and a required question. */
    static final class Schema {
        final StateSchema schema = new StateSchema("test");
        final StateKey<String> question = Keys.required(schema, "question", String.class);
        final StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
        final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    }

    /**
     * A graph of one blocking node that emits {@code payloads} custom events: a run has exactly payloads + 4 events.
     * Blocking, so that its emits wait for the subscriber (the TCK's publishers of up to 2^31 elements).
     */
    static Graph emitter(long payloads) {
        Schema s = new Schema();
        return JavaGraph.builder("emitter", s.schema)
            .blockingNode("emit", ctx -> {
                for (long i = 0; i < payloads; i++) ctx.emit(i);
            })
            .start("emit")
            .build();
    }

    static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) throw new AssertionError("timed out waiting for " + what);
    }

    /** A Reactive Streams subscriber that records what it gets and requests only what the test asks for. */
    static final class Recorder implements Subscriber<RunEvent> {
        final List<RunEvent> events = java.util.Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch subscribed = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        volatile Subscription subscription;
        volatile Throwable error;
        volatile boolean completed;
        private final java.util.concurrent.Semaphore received = new java.util.concurrent.Semaphore(0);

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            subscribed.countDown();
        }

        @Override
        public void onNext(RunEvent event) {
            events.add(event);
            received.release();
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            done.countDown();
        }

        @Override
        public void onComplete() {
            completed = true;
            done.countDown();
        }

        void request(long n) throws InterruptedException {
            Fixtures.await(subscribed, "onSubscribe");
            subscription.request(n);
        }

        void awaitEvents(int n) throws InterruptedException {
            if (!received.tryAcquire(n, WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("expected " + n + " more events, got " + events);
            }
        }

        void awaitDone() throws InterruptedException {
            Fixtures.await(done, "onComplete/onError");
        }
    }
}
