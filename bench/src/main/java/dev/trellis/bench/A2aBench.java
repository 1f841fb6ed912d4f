package dev.trellis.bench;

import dev.trellis.a2a.A2aActions;
import dev.trellis.a2a.A2aServer;
import dev.trellis.a2a.RemoteAgent;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.RunResult;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of an A2A round trip on loopback ({@code trellis-a2a}): a one-node graph calling, through a remote-agent
 * node, a one-node graph served by an {@code A2aServer} in the same JVM (agent card fetched once, in setup), against
 * the served graph run directly. (remote − local) is what one remote task costs: JSON-RPC over HTTP, the SSE stream
 * of its updates, the SDK's task store and queues, and the two runs' events.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class A2aBench {
    private final StateSchema schema = new StateSchema("a2a-bench");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    private final State input = schema.stateOf(Map.of("question", "ping"));
    private Graph echo;
    private Graph caller;
    private A2aServer server;
    private RemoteAgent remote;

    @Setup
    public void setUp() {
        echo = JavaGraph.builder("echo", schema)
            .node("answer", context -> context.set(answer, "pong: " + context.get(question)))
            .start("answer")
            .build();
        server = A2aServer.builder(echo, question, answer).name("echo").start();
        remote = RemoteAgent.connect(server.getUrl());
        caller = JavaGraph.builder("caller", schema)
            .blockingNode("ask", A2aActions.remoteAgent(remote, answer, s -> s.get(question)))
            .start("ask")
            .build();
        Check.equal("remote answer", "pong: ping", TrellisWorkloads.invoke(caller, input).getState().get(answer));
    }

    @TearDown
    public void tearDown() {
        remote.close();
        server.close();
    }

    /** One remote task: the caller's run, the served graph's run, JSON-RPC and SSE on loopback. */
    @Benchmark
    public RunResult remoteRoundTrip() {
        return TrellisWorkloads.invoke(caller, input);
    }

    /** The served graph run in this JVM, without A2A. */
    @Benchmark
    public RunResult localRun() {
        return TrellisWorkloads.invoke(echo, input);
    }
}
