package dev.trellis.bench;

import static org.bsc.langgraph4j.GraphDefinition.END;
import static org.bsc.langgraph4j.GraphDefinition.START;
import static org.bsc.langgraph4j.action.AsyncEdgeAction.edge_async;
import static org.bsc.langgraph4j.action.AsyncNodeAction.node_async;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.bsc.langgraph4j.CompileConfig;
import org.bsc.langgraph4j.CompiledGraph;
import org.bsc.langgraph4j.GraphStateException;
import org.bsc.langgraph4j.RunnableConfig;
import org.bsc.langgraph4j.StateGraph;
import org.bsc.langgraph4j.state.AgentState;
import org.bsc.langgraph4j.state.Channel;
import org.bsc.langgraph4j.state.Channels;

/**
 * The benchmark workloads written with LangGraph4j's idiomatic API ({@code StateGraph}, {@code AgentState},
 * {@code Channels.appender}, {@code node_async}, {@code edge_async}, {@code compile()}, {@code invoke(Map)}).
 */
public final class LangGraph4jWorkloads {
    private LangGraph4jWorkloads() {}

    /** The state: a counter {@code n} (last value wins) and an appended {@code log}. */
    public static final class BenchAgentState extends AgentState {
        public static final Map<String, Channel<?>> SCHEMA = Map.of(
                "n", Channels.base(() -> 0),
                "log", Channels.<String>appender(ArrayList::new));

        public BenchAgentState(Map<String, Object> initData) {
            super(initData);
        }

        public int n() {
            return this.<Integer>value("n").orElse(0);
        }

        public List<String> log() {
            return this.<List<String>>value("log").orElse(List.of());
        }
    }

    /** The input of every run: empty, so every key starts at its channel default. */
    public static final Map<String, Object> INPUT = Map.of();

    private static StateGraph<BenchAgentState> newGraph() {
        return new StateGraph<>(BenchAgentState.SCHEMA, BenchAgentState::new);
    }

    private static Map<String, Object> increment(BenchAgentState s) {
        return Map.of("n", s.n() + 1);
    }

    public static CompiledGraph<BenchAgentState> oneNode() throws GraphStateException {
        return newGraph()
                .addNode("only", node_async(LangGraph4jWorkloads::increment))
                .addEdge(START, "only")
                .addEdge("only", END)
                .compile();
    }

    public static CompiledGraph<BenchAgentState> chain(int length) throws GraphStateException {
        StateGraph<BenchAgentState> g = newGraph();
        for (int i = 0; i < length; i++) g.addNode("c" + i, node_async(LangGraph4jWorkloads::increment));
        g.addEdge(START, "c0");
        for (int i = 1; i < length; i++) g.addEdge("c" + (i - 1), "c" + i);
        g.addEdge("c" + (length - 1), END);
        return g.compile(CompileConfig.builder().recursionLimit(length + 10).build());
    }

    /** entry -> width branches (each appending its id to the log) -> join; run in parallel only with an executor. */
    public static CompiledGraph<BenchAgentState> fanOut(int width) throws GraphStateException {
        StateGraph<BenchAgentState> g = newGraph()
                .addNode("entry", node_async(s -> Map.of()))
                .addNode("join", node_async(s -> Map.of()))
                .addEdge(START, "entry")
                .addEdge("join", END);
        for (int i = 0; i < width; i++) {
            String label = "b" + i;
            g.addNode(label, node_async(s -> Map.of("log", label)));
            g.addEdge("entry", label);
            g.addEdge(label, "join");
        }
        return g.compile();
    }

    /** The run config that makes the fan-out's branches run on {@code executor} (LangGraph4j's parallel executor). */
    public static RunnableConfig parallelConfig(Executor executor) {
        return RunnableConfig.builder().addParallelNodeExecutor("entry", executor).build();
    }

    public static CompiledGraph<BenchAgentState> loop(int iterations) throws GraphStateException {
        return newGraph()
                .addNode("step", node_async(LangGraph4jWorkloads::increment))
                .addEdge(START, "step")
                .addConditionalEdges(
                        "step",
                        edge_async(s -> s.n() < iterations ? "step" : "end"),
                        Map.of("step", "step", "end", END))
                .compile(CompileConfig.builder().recursionLimit(iterations * 2 + 10).build());
    }

    /** A chain of length nodes, each appending a distinct 400-byte string to the log. */
    public static CompiledGraph<BenchAgentState> stateGrowth(int length) throws GraphStateException {
        StateGraph<BenchAgentState> g = newGraph();
        for (int i = 0; i < length; i++) {
            String payload = TrellisWorkloads.payload(i);
            g.addNode("g" + i, node_async(s -> Map.of("log", payload)));
        }
        g.addEdge(START, "g0");
        for (int i = 1; i < length; i++) g.addEdge("g" + (i - 1), "g" + i);
        g.addEdge("g" + (length - 1), END);
        return g.compile(CompileConfig.builder().recursionLimit(length + 10).build());
    }

    public static BenchAgentState invoke(CompiledGraph<BenchAgentState> graph) {
        return graph.invoke(INPUT).orElseThrow();
    }

    public static BenchAgentState invoke(CompiledGraph<BenchAgentState> graph, RunnableConfig config) {
        return graph.invoke(INPUT, config).orElseThrow();
    }
}
