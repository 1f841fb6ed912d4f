package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.NodeWrites;
import dev.trellis.runtime.Budget;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.LimitExceededException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Flow;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Budgets from Java: {@code JavaNodeScope.charge}, {@code JavaNodeInterceptor.Chain.charge}, {@code JavaRunOptions.Builder.budget}
 * (docs/semantics.md §13.4).
 */
class BudgetJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private Graph chain() {
        return JavaGraph.builder("budget", s.schema)
            .node("plan", ctx -> {
                ctx.charge("tokens", 1200);
                ctx.charge("usd", 0.03);
                ctx.set(s.log, List.of("plan"));
            })
            .blockingNode("write", ctx -> {
                ctx.charge("usd", 0.05);
                ctx.set(s.log, List.of("write"));
            })
            .node("publish", ctx -> ctx.set(s.log, List.of("publish")))
            .edge("plan", "write")
            .edge("write", "publish")
            .start("plan")
            .build();
    }

    @Test
    void nodesChargeMetersAndTheResultHasTheTotals() throws Exception {
        RunResult result = Trellis.runner(chain()).invoke(Map.of("question", "q"));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(Map.of("tokens", 1200.0, "usd", 0.08), result.getMeters());
    }

    @Test
    void aBudgetStopsTheRunNamingTheMeterItsLimitTheTotalAndTheNode() {
        Budget budget = new Budget()
            .withMeter("usd", 0.05)
            .withMaxNodeExecutions(100)
            .withMaxWallTime(Duration.ofMinutes(5));
        JavaRunOptions settings = JavaRunOptions.builder().budget(budget).build();
        assertEquals(budget, settings.getBudget().orElseThrow());
        GraphRunException failed = assertThrows(
            GraphRunException.class, () -> Trellis.runner(chain(), settings).invoke(Map.of("question", "q")));
        LimitExceededException error = assertInstanceOf(LimitExceededException.class, failed.getCause());
        assertEquals("usd", error.getMeter());
        assertEquals(0.05, error.getValue());
        assertEquals(0.08, error.getTotal());
        assertEquals("write", error.getNodeId());
        // The crossing node's writes applied; nothing started after it.
        assertEquals(List.of("plan", "write"), failed.getResult().getState().get(s.log));
        assertEquals(Status.PENDING, failed.getResult().node("publish").getStatus());
    }

    @Test
    void anInterceptorChargesFromWhatTheCallReturnedAndEventsCarryTheTotals() throws Exception {
        JavaNodeInterceptor meter = chain -> {
            NodeWrites writes = chain.proceed();
            chain.charge("writes", writes.getSize());
            return writes;
        };
        JavaRunOptions settings = JavaRunOptions.builder().intercept(meter).build();
        List<RunEvent> events = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch ended = new CountDownLatch(1);
        Trellis.runner(chain(), settings).events(Map.of("question", "q")).subscribe(new Flow.Subscriber<>() {
            @Override public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override public void onNext(RunEvent item) {
                events.add(item);
            }

            @Override public void onError(Throwable throwable) {
                ended.countDown();
            }

            @Override public void onComplete() {
                ended.countDown();
            }
        });
        Fixtures.await(ended, "the run's events");
        List<RunEvent.MetersCharged> charged = events.stream()
            .filter(RunEvent.MetersCharged.class::isInstance).map(RunEvent.MetersCharged.class::cast).toList();
        assertEquals(List.of("plan", "write", "publish"), charged.stream().map(RunEvent.NodeEvent::getNodeId).toList());
        assertEquals(Map.of("tokens", 1200.0, "usd", 0.08, "writes", 3.0), charged.get(2).getTotals());
        assertEquals(Map.of("writes", 1.0), charged.get(2).getCharges());
    }

    @Test
    void totalsSurviveAResumeFromJava() throws Exception {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        Graph graph = JavaGraph.builder("budget-resume", s.schema)
            .node("draft", ctx -> ctx.charge("usd", 1.0))
            .node("approve", ctx -> {
                String answer = ctx.interrupt("ok?");
                ctx.charge("usd", 1.0);
                ctx.set(s.log, List.of(answer));
            })
            .edge("draft", "approve")
            .start("draft")
            .build();
        JavaRunOptions settings = JavaRunOptions.builder()
            .checkpointing(new Checkpointing(store))
            .budget(new Budget().withMeter("usd", 1.5))
            .build();
        TrellisRunner runner = Trellis.runner(graph, settings);
        RunResult paused = runner.invoke(Map.of("question", "q"));
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        assertEquals(Map.of("usd", 1.0), paused.getMeters());
        Throwable failed = runner.resumeAsync(paused.getRunId(), "yes").handle((r, e) -> e).get();
        // Over the budget only with the totals from before the resume: 1.0 + 1.0 > 1.5.
        LimitExceededException error = assertInstanceOf(LimitExceededException.class, Failures.cause(failed));
        assertEquals("approve", error.getNodeId());
        assertEquals(2.0, error.getTotal());
    }
}
