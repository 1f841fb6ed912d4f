package dev.trellis.bench;

import ai.koog.agents.core.agent.GraphAIAgent;
import dev.trellis.runtime.RunResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import kotlin.Unit;
import kotlinx.coroutines.Dispatchers;
import org.bsc.langgraph4j.RunnableConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/** Workload 3: entry, 64 parallel branches each appending to a reducer key, join. */
public class FanOutBench extends WorkloadBench {
    private GraphAIAgent<Unit, List<String>> koog;
    private GraphAIAgent<Unit, List<String>> koogUnconfined;

    private ExecutorService executor;
    private RunnableConfig parallel;

    @Setup
    public void setUp() throws Exception {
        trellis = TrellisWorkloads.INSTANCE.fanOut(TrellisWorkloads.FAN_OUT);
        input = TrellisWorkloads.INSTANCE.input();
        lg4j = LangGraph4jWorkloads.fanOut(TrellisWorkloads.FAN_OUT);
        // one worker per core, like kotlinx.coroutines Dispatchers.Default which runs the Trellis branches
        executor = Executors.newWorkStealingPool(Runtime.getRuntime().availableProcessors());
        parallel = LangGraph4jWorkloads.parallelConfig(executor);
        Check.equal("lg4j parallel log", TrellisWorkloads.FAN_OUT,
                LangGraph4jWorkloads.invoke(lg4j, parallel).log().size());
        RunResult result = TrellisWorkloads.invoke(trellis, input);
        Check.equal("trellis log", TrellisWorkloads.FAN_OUT, TrellisWorkloads.log(result).size());
        LangGraph4jWorkloads.BenchAgentState state = LangGraph4jWorkloads.invoke(lg4j);
        Check.equal("lg4j log", TrellisWorkloads.FAN_OUT, state.log().size());
        agentic = AgenticWorkloads.fanOut(TrellisWorkloads.FAN_OUT, null);
        koog = KoogWorkloads.fanOut(TrellisWorkloads.FAN_OUT, Dispatchers.getDefault());
        koogUnconfined = KoogWorkloads.fanOut(TrellisWorkloads.FAN_OUT, Dispatchers.getUnconfined());
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < TrellisWorkloads.FAN_OUT; i++) ids.add("b" + i);
        Check.equal("agentic log", ids, AgenticWorkloads.invoke(agentic));
        Check.equal("koog log", ids, KoogWorkloads.run(koog, Unit.INSTANCE));
        Check.equal("koog unconfined log", ids, KoogWorkloads.run(koogUnconfined, Unit.INSTANCE));
    }


    /** LangGraph4j `CompiledGraph.invoke(Map, config)` with its parallel node executor on the fan-out. */
    @Benchmark
    public LangGraph4jWorkloads.BenchAgentState lg4jInvokeParallel() {
        return LangGraph4jWorkloads.invoke(lg4j, parallel);
    }

    @TearDown
    public void tearDown() {
        executor.shutdownNow();
    }

    /** Koog: `GraphAIAgent.run(Unit)` inside runBlocking, its `parallel` node on Dispatchers.Default. */
    @Benchmark
    public List<String> koogRun() {
        return KoogWorkloads.run(koog, Unit.INSTANCE);
    }

    /** Koog: the same with the `parallel` node on Dispatchers.Unconfined. */
    @Benchmark
    public List<String> koogRunUnconfined() {
        return KoogWorkloads.run(koogUnconfined, Unit.INSTANCE);
    }
}
