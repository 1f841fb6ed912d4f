package dev.trellis.bench;

import dev.langchain4j.agentic.Agent;
import dev.langchain4j.agentic.AgenticServices;
import dev.langchain4j.agentic.UntypedAgent;
import dev.langchain4j.agentic.scope.AgenticScope;
import dev.langchain4j.service.V;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The benchmark workloads written with LangChain4j agentic's workflow agents over non-AI agents: every node is an
 * {@code AgenticServices.agentAction} reading and writing the run's {@code AgenticScope}, composed with
 * {@code sequenceBuilder}, {@code loopBuilder}, {@code parallelBuilder} and {@code parallelMapperBuilder}; a run is
 * {@code UntypedAgent.invoke(Map)}, whose result is the workflow's {@code output} function.
 */
public final class AgenticWorkloads {
    private AgenticWorkloads() {}

    /** The input of every run but the map: empty, so every key starts unset. */
    public static final Map<String, Object> INPUT = Map.of();

    /** An agent incrementing the counter {@code n} of the scope (0 when unset). */
    private static Object increment() {
        return AgenticServices.agentAction(
                (AgenticScope scope) -> scope.writeState("n", scope.readState("n", 0) + 1));
    }

    private static int counter(AgenticScope scope) {
        return scope.readState("n", 0);
    }

    public static UntypedAgent oneNode() {
        return AgenticServices.sequenceBuilder()
                .subAgents(increment())
                .output(AgenticWorkloads::counter)
                .build();
    }

    /** A sequence of length counting agents; the result is the counter. */
    public static UntypedAgent chain(int length) {
        List<Object> agents = new ArrayList<>(length);
        for (int i = 0; i < length; i++) agents.add(increment());
        return AgenticServices.sequenceBuilder().subAgents(agents).output(AgenticWorkloads::counter).build();
    }

    /**
     * A parallel agent of width branches, each writing its id under a key of its own (the scope has no appending
     * reducer; its state is a concurrent map), joined by the parallel agent's output function into the list of ids,
     * in branch order. The branches run on executor, or on LangChain4j's default executor when it is null.
     */
    public static UntypedAgent fanOut(int width, Executor executor) {
        List<Object> branches = new ArrayList<>(width);
        String[] keys = new String[width];
        for (int i = 0; i < width; i++) {
            String label = "b" + i;
            keys[i] = label;
            branches.add(AgenticServices.agentAction((AgenticScope scope) -> scope.writeState(label, label)));
        }
        var builder = AgenticServices.parallelBuilder().subAgents(branches).output(scope -> {
            List<String> log = new ArrayList<>(width);
            for (String key : keys) log.add(scope.readState(key, ""));
            return log;
        });
        if (executor != null) builder.executor(executor);
        return builder.build();
    }

    /** A loop agent of one counting agent, exiting once the counter reached iterations. */
    public static UntypedAgent loop(int iterations) {
        return AgenticServices.loopBuilder()
                .subAgents(increment())
                .maxIterations(iterations * 2)
                .exitCondition(scope -> counter(scope) >= iterations)
                .output(AgenticWorkloads::counter)
                .build();
    }

    /**
     * A sequence of length agents, each appending a distinct 400-byte string to the list {@code log} of the scope, in
     * place (the scope is the run's own, so the list is created by the first agent of each run; copying it on every
     * append would make this workload quadratic, which no user would write).
     */
    public static UntypedAgent stateGrowth(int length) {
        List<Object> agents = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            String payload = TrellisWorkloads.payload(i);
            agents.add(AgenticServices.agentAction((AgenticScope scope) -> {
                List<String> log = scope.readState("log", null);
                if (log == null) {
                    log = new ArrayList<>();
                    scope.writeState("log", log);
                }
                log.add(payload);
            }));
        }
        return AgenticServices.sequenceBuilder()
                .subAgents(agents)
                .output(scope -> scope.readState("log", List.<String>of()))
                .build();
    }

    /** A sequence of count sequences (sub-workflows, sharing the run's scope) of length counting agents. */
    public static UntypedAgent subgraphChain(int count, int length) {
        List<Object> children = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            children.add(AgenticServices.sequenceBuilder().subAgents(chainAgents(length)).build());
        }
        return AgenticServices.sequenceBuilder().subAgents(children).output(AgenticWorkloads::counter).build();
    }

    private static List<Object> chainAgents(int length) {
        List<Object> agents = new ArrayList<>(length);
        for (int i = 0; i < length; i++) agents.add(increment());
        return agents;
    }

    /** The task of the map: a non-AI agent whose argument is the item the parallel mapper gives it. */
    public static final class AddItem {
        @Agent(outputKey = "part")
        public int add(@V("item") int item) {
            return item;
        }
    }

    /**
     * A parallel mapper running {@link AddItem} once per element of the input list {@code items} on executor (or
     * LangChain4j's default executor when null); its output function sums the parts (the total of Trellis's map).
     */
    @SuppressWarnings("unchecked")
    public static UntypedAgent map(Executor executor) {
        var builder = AgenticServices.parallelMapperBuilder()
                .subAgents(new AddItem())
                .itemsProvider("items")
                .outputKey("parts")
                .output(scope -> {
                    int total = 0;
                    for (Object part : (List<Object>) scope.readState("parts")) total += (Integer) part;
                    return total;
                });
        if (executor != null) builder.executor(executor);
        return builder.build();
    }

    /** The input of the map: the items 0 until count. */
    public static Map<String, Object> mapInput(int count) {
        List<Integer> items = new ArrayList<>(count);
        for (int i = 0; i < count; i++) items.add(i);
        return Map.of("items", List.copyOf(items));
    }

    public static Object invoke(UntypedAgent agent) {
        return agent.invoke(INPUT);
    }

    public static Object invoke(UntypedAgent agent, Map<String, Object> input) {
        return agent.invoke(input);
    }
}
