package dev.trellis.bench;

import ai.koog.agents.core.agent.GraphAIAgent;
import dev.langchain4j.agentic.UntypedAgent;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Composition (subgraph and map nodes) against flat twins measured in the same run: a subgraph node of a one-node
 * child vs the one node ({@code subgraphOne}/{@code flatOne}); a loop of 100 subgraph calls vs a loop of 100 nodes
 * ({@code subgraphLoop}/{@code flatLoop}: the per-call cost of a subgraph); a chain of 10 subgraphs of 10 nodes vs a
 * chain of 100 ({@code subgraphChain}/{@code flatChain}); a map of 1,000 trivial tasks, Kotlin and Java-built
 * ({@code map}/{@code javaMap}). The peers' twins of the subgraph chain and the map ({@code agentic*}, {@code koog*})
 * are in the same class (see AgenticWorkloads and KoogWorkloads).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class CompositionBench {
    private Graph subgraphOne;
    private Graph flatOne;
    private Graph subgraphLoop;
    private Graph flatLoop;
    private Graph subgraphChain;
    private Graph flatChain;
    private Graph map;
    private TrellisRunner javaMap;
    private State input;
    private State mapInput;
    private UntypedAgent agenticSubgraphChain;
    private GraphAIAgent<Integer, Integer> koogSubgraphChain;
    private UntypedAgent agenticMap;
    private UntypedAgent agenticMapCallerThread;
    private Map<String, Object> agenticMapInput;

    @Setup
    public void setUp() throws Exception {
        CompositionWorkloads w = CompositionWorkloads.INSTANCE;
        subgraphOne = w.subgraphOne();
        flatOne = TrellisWorkloads.INSTANCE.oneNode();
        subgraphLoop = w.subgraphLoop(CompositionWorkloads.LOOP);
        flatLoop = TrellisWorkloads.INSTANCE.loop(CompositionWorkloads.LOOP);
        subgraphChain = w.subgraphChain(10, 10);
        flatChain = TrellisWorkloads.INSTANCE.chain(100);
        map = w.map();
        javaMap = Trellis.runner(JavaWorkloads.map());
        input = TrellisWorkloads.INSTANCE.input();
        mapInput = CompositionWorkloads.mapInput(CompositionWorkloads.MAP_TASKS);

        Check.equal("subgraphOne n", 1, TrellisWorkloads.counter(subgraphOne()));
        Check.equal("flatOne n", 1, TrellisWorkloads.counter(flatOne()));
        Check.equal("subgraphLoop n", CompositionWorkloads.LOOP, TrellisWorkloads.counter(subgraphLoop()));
        Check.equal("flatLoop n", CompositionWorkloads.LOOP, TrellisWorkloads.counter(flatLoop()));
        Check.equal("subgraphChain n", 100, TrellisWorkloads.counter(subgraphChain()));
        Check.equal("flatChain n", 100, TrellisWorkloads.counter(flatChain()));
        int sum = CompositionWorkloads.MAP_TASKS * (CompositionWorkloads.MAP_TASKS - 1) / 2;
        Check.equal("map total", sum, CompositionWorkloads.total(map()));
        Check.equal("javaMap total", sum, CompositionWorkloads.total(javaMap()));

        agenticSubgraphChain = AgenticWorkloads.subgraphChain(10, 10);
        koogSubgraphChain = KoogWorkloads.subgraphChain(10, 10);
        agenticMap = AgenticWorkloads.map(null);
        agenticMapCallerThread = AgenticWorkloads.map(Runnable::run);
        agenticMapInput = AgenticWorkloads.mapInput(CompositionWorkloads.MAP_TASKS);
        Check.equal("agenticSubgraphChain n", 100, agenticSubgraphChain());
        Check.equal("koogSubgraphChain n", 100, koogSubgraphChain());
        Check.equal("agenticMap total", sum, agenticMap());
        Check.equal("agenticMapCallerThread total", sum, agenticMapCallerThread());
    }

    /** A subgraph node whose child is one counting node. */
    @Benchmark
    public RunResult subgraphOne() {
        return TrellisWorkloads.invoke(subgraphOne, input);
    }

    /** The one counting node, flat. */
    @Benchmark
    public RunResult flatOne() {
        return TrellisWorkloads.invoke(flatOne, input);
    }

    /** A subgraph node of a one-node child, run 100 times in a loop. */
    @Benchmark
    public RunResult subgraphLoop() {
        return TrellisWorkloads.invoke(subgraphLoop, input);
    }

    /** A counting node run 100 times in a loop. */
    @Benchmark
    public RunResult flatLoop() {
        return TrellisWorkloads.invoke(flatLoop, input);
    }

    /** A chain of 10 subgraph nodes, each a chain of 10 counting nodes. */
    @Benchmark
    public RunResult subgraphChain() {
        return TrellisWorkloads.invoke(subgraphChain, input);
    }

    /** A flat chain of 100 counting nodes. */
    @Benchmark
    public RunResult flatChain() {
        return TrellisWorkloads.invoke(flatChain, input);
    }

    /** A map node of 1,000 trivial tasks (Kotlin). */
    @Benchmark
    public RunResult map() {
        return TrellisWorkloads.invoke(map, mapInput);
    }

    /** The same map built with {@code JavaGraph} ({@code map} with an inline {@code MapTask}), blocking invoke. */
    @Benchmark
    public RunResult javaMap() throws InterruptedException {
        return javaMap.invoke(mapInput);
    }

    /** LangChain4j agentic: a sequence of 10 sequences of 10 counting agents (see AgenticWorkloads). */
    @Benchmark
    public Object agenticSubgraphChain() {
        return AgenticWorkloads.invoke(agenticSubgraphChain);
    }

    /** Koog: a chain of 10 subgraphs of 10 counting nodes (see KoogWorkloads). */
    @Benchmark
    public Integer koogSubgraphChain() {
        return KoogWorkloads.run(koogSubgraphChain, 0);
    }

    /** LangChain4j agentic: a parallel mapper of 1,000 items on its default executor (see AgenticWorkloads). */
    @Benchmark
    public Object agenticMap() {
        return AgenticWorkloads.invoke(agenticMap, agenticMapInput);
    }

    /** LangChain4j agentic: the same parallel mapper with every item run on the caller's thread. */
    @Benchmark
    public Object agenticMapCallerThread() {
        return AgenticWorkloads.invoke(agenticMapCallerThread, agenticMapInput);
    }
}
