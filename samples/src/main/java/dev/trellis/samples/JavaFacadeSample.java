package dev.trellis.samples;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.AsyncAgent;
import dev.trellis.javaapi.AsyncAgentScope;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.NodeOptions;
import dev.trellis.graph.Retry;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.agent.AgentInput;
import dev.trellis.runtime.agent.AgentSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A graph written and run from plain Java with the facade ({@code dev.trellis.javaapi}): a fan-out of three
 * parallel searches into a join (appending to a reducer key), a retry (one search fails its first attempt),
 * a loop (revise until the round counter reaches 3) and a review by an agent written in Java ({@link Reviewer},
 * an {@link AsyncAgent}). Quick nodes are {@code node}s (inline on the run's thread); the searches stand for
 * blocking I/O and are {@code blockingNode}s. Runs it with {@code invokeAsync} and streams a second run's events
 * through a JDK {@link Flow.Publisher}.
 */
public final class JavaFacadeSample {
    /** How many rounds the revise loop runs. */
    public static final int ROUNDS = 3;

    /** The sample's topic. */
    public static final String TOPIC = "Why is the sky blue?";

    static final StateSchema SCHEMA = new StateSchema("java-sample");
    static final StateKey<String> TOPIC_KEY = Keys.required(SCHEMA, "topic", String.class);
    static final StateKey<List<String>> FINDINGS = Keys.appending(SCHEMA, "findings", String.class);
    static final StateKey<String> DRAFT = Keys.of(SCHEMA, "draft", String.class, "");
    static final StateKey<Integer> ROUND = Keys.of(SCHEMA, "round", Integer.class, 0);
    static final StateKey<String> VERDICT = Keys.of(SCHEMA, "verdict", String.class, "");

    /** Where the reviewer's (pretend) blocking model client runs. */
    private static final ExecutorService MODEL_CALLS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "reviewer-model");
        thread.setDaemon(true);
        return thread;
    });

    private JavaFacadeSample() {}

    /**
     * An agent written in Java: it keeps a conversation (every prompt it was given), answers on its own pool as a
     * blocking model client would, and streams tokens. The agent node isolates each call: it takes a snapshot of
     * the conversation before the call and restores it after, so one reviewer serves every run without leaking
     * one run's prompts into another's.
     */
    public static final class Reviewer implements AsyncAgent {
        private final List<String> conversation = new ArrayList<>(List.of("You review research drafts."));

        @Override
        public CompletionStage<String> call(AgentInput input, AsyncAgentScope scope) {
            conversation.add(input.getPrompt());
            int messages = conversation.size();
            scope.step("reviewing " + input.getNodeId());
            return CompletableFuture.supplyAsync(() -> {
                String verdict = "accepted after " + messages + " messages";
                for (String word : verdict.split(" ")) scope.token(word);   // streamed while the "model" answers
                return verdict;
            }, MODEL_CALLS);
        }

        /** The conversation as it is between calls: every call leaves it as it found it. */
        synchronized List<String> conversation() {
            return List.copyOf(conversation);
        }

        @Override
        public Optional<AgentSnapshot> snapshot() {
            return Optional.of(new AgentSnapshot(List.copyOf(conversation)));
        }

        @Override
        @SuppressWarnings("unchecked")
        public void restore(AgentSnapshot snapshot) {
            conversation.clear();
            conversation.addAll((List<String>) snapshot.getValue());
        }
    }

    /** The one reviewer every run of the sample shares. */
    static final Reviewer REVIEWER = new Reviewer();

    /** plan -> (search-web | search-news | search-papers) -> join -> revise -> revise ... -> review -> END */
    public static Graph graph() {
        return JavaGraph.builder("java-sample", SCHEMA)
            .node("plan", ctx -> ctx.emit("planning searches for " + ctx.get(TOPIC_KEY)))
            .blockingNode("search-web", ctx -> ctx.set(FINDINGS, List.of("web: " + ctx.get(TOPIC_KEY))))
            .blockingNode("search-news", ctx -> {
                if (ctx.getAttempt() == 1) throw new IllegalStateException("news service unavailable");  // retried
                ctx.set(FINDINGS, List.of("news: " + ctx.get(TOPIC_KEY)));
            }, NodeOptions.retry(Retry.fixed(2, Duration.ofMillis(20))))
            .blockingNode("search-papers", ctx -> ctx.set(FINDINGS, List.of("papers: " + ctx.get(TOPIC_KEY))))
            .node("join", ctx -> ctx.set(DRAFT, ctx.get(FINDINGS).size() + " findings"))
            .node("revise", ctx -> {
                int round = ctx.get(ROUND) + 1;
                ctx.set(ROUND, round);
                ctx.set(DRAFT, ctx.get(DRAFT) + ", revision " + round);
            })
            .agentNode("review", REVIEWER, VERDICT, state -> "Review the draft '" + state.get(DRAFT) + "'")
            .start("plan")
            .edge("plan", "search-web").edge("plan", "search-news").edge("plan", "search-papers")
            .edge("search-web", "join").edge("search-news", "join").edge("search-papers", "join")
            .edge("join", "revise")
            .route("revise", List.of("revise", "review"), state -> state.get(ROUND) < ROUNDS ? "revise" : "review")
            .build();
    }

    /** What the sample did: the result of the {@code invokeAsync} run and the events of the streamed run. */
    public record Summary(RunResult result, List<RunEvent> streamedEvents) {
        /** Lines worth printing. */
        public List<String> notes() {
            return List.of(
                "invokeAsync: " + result.getStatus() + ", draft '" + result.getState().get(DRAFT) + "', review '"
                    + result.getState().get(VERDICT) + "'",
                "search-news attempts: " + result.node("search-news").getAttempts()
                    + ", revise executions: " + result.node("revise").getExecutions()
                    + ", join executions: " + result.node("join").getExecutions(),
                "Flow.Publisher run: " + streamedEvents.size() + " events, last "
                    + streamedEvents.get(streamedEvents.size() - 1).getClass().getSimpleName());
        }
    }

    /** Runs the sample: streams one run's events to {@code onEvent}, and runs the graph once with invokeAsync. */
    public static Summary run(Consumer<RunEvent> onEvent) throws Exception {
        TrellisRunner runner = Trellis.runner(graph());

        // Every subscription to events(...) starts a fresh run; the stream ends after the terminal event.
        List<RunEvent> streamed = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> streamDone = new CompletableFuture<>();
        runner.events(Map.of("topic", TOPIC)).subscribe(new Flow.Subscriber<RunEvent>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(RunEvent event) {
                streamed.add(event);
                onEvent.accept(event);
            }

            @Override
            public void onError(Throwable error) {
                streamDone.completeExceptionally(error);
            }

            @Override
            public void onComplete() {
                streamDone.complete(null);
            }
        });

        CompletableFuture<RunResult> done = runner.invokeAsync(Map.of("topic", TOPIC));
        RunResult result = done.get(30, TimeUnit.SECONDS);  // a failed run throws ExecutionException(GraphRunException)
        streamDone.get(30, TimeUnit.SECONDS);
        return new Summary(result, List.copyOf(streamed));
    }

    /** Runs the sample on its own, printing every event and the summary. */
    public static void main(String[] args) throws Exception {
        Summary summary = run(event -> System.out.println(event));
        summary.notes().forEach(System.out::println);
    }
}
