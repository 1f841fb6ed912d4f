package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.RunOptions;
import dev.trellis.runtime.RunResult;
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
 * What budgets cost on the 100-node chain (docs/semantics.md §13.4): {@code plain} is {@code ChainBench.trellisInvoke}
 * (no budget, no charges: the path every run without a budget takes), {@code budgetNoCharges} a run with a budget on
 * every limit whose nodes charge nothing, {@code budgetCharging} the same with every node charging one token. Run with
 * {@code -prof gc} to see the bytes per run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class BudgetBench {
    private Graph chain;
    private Graph charging;
    private State input;
    private RunOptions budgeted;

    @Setup
    public void setUp() {
        chain = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        charging = BudgetWorkloads.chargingChain(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        budgeted = BudgetWorkloads.budgeted();
        Check.equal("plain n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(TrellisWorkloads.invoke(chain, input)));
        RunResult charged = TrellisWorkloads.invoke(charging, input, budgeted);
        Check.equal("charged tokens", (double) TrellisWorkloads.CHAIN, charged.getMeters().get("tokens"));
    }

    /** No budget, no charges. */
    @Benchmark
    public RunResult plain() {
        return TrellisWorkloads.invoke(chain, input);
    }

    /** A budget on every limit (the wall time read at every start and end), no charges. */
    @Benchmark
    public RunResult budgetNoCharges() {
        return TrellisWorkloads.invoke(chain, input, budgeted);
    }

    /** A budget, every node charging one token. */
    @Benchmark
    public RunResult budgetCharging() {
        return TrellisWorkloads.invoke(charging, input, budgeted);
    }
}
