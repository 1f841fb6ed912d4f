package dev.trellis.bench;

import dev.langchain4j.agentic.UntypedAgent;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.RunResult;
import java.util.concurrent.TimeUnit;
import org.bsc.langgraph4j.CompiledGraph;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The measurements every workload takes, on the graphs its subclass builds in its {@code @Setup}: Trellis
 * {@code invoke}, Trellis {@code run} with every event collected, LangGraph4j's {@code invoke} and LangChain4j agentic's
 * (the peers' other forms, such as Koog's, are in the subclasses: their types differ by workload). JMH names each
 * benchmark after the subclass ({@code ChainBench.trellisInvoke}), and the settings below apply to all of them.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public abstract class WorkloadBench {
    protected Graph trellis;
    protected State input;
    protected CompiledGraph<LangGraph4jWorkloads.BenchAgentState> lg4j;
    protected UntypedAgent agentic;

    /** Trellis `Graph.invoke` (inside runBlocking). */
    @Benchmark
    public RunResult trellisInvoke() {
        return TrellisWorkloads.invoke(trellis, input);
    }

    /** Trellis `Graph.run` collecting every event (inside runBlocking). */
    @Benchmark
    public int trellisRunEvents() {
        return TrellisWorkloads.runCollect(trellis, input);
    }

    /** LangChain4j agentic: the workload's agent, `UntypedAgent.invoke(Map)` (see AgenticWorkloads). */
    @Benchmark
    public Object agenticInvoke() {
        return AgenticWorkloads.invoke(agentic);
    }

    /** LangGraph4j `CompiledGraph.invoke(Map)`. */
    @Benchmark
    public LangGraph4jWorkloads.BenchAgentState lg4jInvoke() {
        return LangGraph4jWorkloads.invoke(lg4j);
    }
}
