package dev.trellis.bench;

import com.sun.management.ThreadMXBean;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.Checkpointing;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

/**
 * Bytes allocated per operation by the Trellis rows of the benchmarks, without JMH: each row is run for a warm-up
 * time, then a number of times between two readings of every live thread's allocated bytes
 * ({@code com.sun.management.ThreadMXBean}), the same counter JMH's {@code -prof gc} reads for
 * {@code gc.alloc.rate.norm}. The figure does not depend on the machine's load. Run it as
 * {@code java -cp benchmarks.jar dev.trellis.bench.AllocProbe [regex] [warm-up seconds] [operations]}.
 */
public final class AllocProbe {
    private AllocProbe() {}

    public static void main(String[] args) throws Exception {
        Pattern only = Pattern.compile(args.length > 0 ? args[0] : ".*");
        long warmupMillis = (long) (1000 * (args.length > 1 ? Double.parseDouble(args[1]) : 5));
        int operations = args.length > 2 ? Integer.parseInt(args[2]) : 2_000;
        int histogramOps = args.length > 3 ? Integer.parseInt(args[3]) : 0;

        TrellisWorkloads w = TrellisWorkloads.INSTANCE;
        State input = w.input();
        Graph oneNode = w.oneNode();
        Graph chain = w.chain(TrellisWorkloads.CHAIN);
        Graph loop = w.loop(TrellisWorkloads.LOOP);
        Graph fanOut = w.fanOut(TrellisWorkloads.FAN_OUT);
        CompositionWorkloads c = CompositionWorkloads.INSTANCE;
        Graph subgraphOne = c.subgraphOne();
        Graph subgraphLoop = c.subgraphLoop(CompositionWorkloads.LOOP);
        Graph map = c.map();
        TrellisRunner javaMap = Trellis.runner(JavaWorkloads.map());
        State mapInput = CompositionWorkloads.mapInput(CompositionWorkloads.MAP_TASKS);
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        Checkpointing checkpointing = new Checkpointing(store);
        long[] runs = {0};

        Map<String, Callable<Object>> rows = new LinkedHashMap<>();
        rows.put("OneNodeBench.trellisInvoke", () -> TrellisWorkloads.invoke(oneNode, input));
        rows.put("OneNodeBench.trellisRunEvents", () -> TrellisWorkloads.runCollect(oneNode, input));
        rows.put("ChainBench.trellisInvoke", () -> TrellisWorkloads.invoke(chain, input));
        rows.put("ChainBench.trellisRunEvents", () -> TrellisWorkloads.runCollect(chain, input));
        rows.put("LoopBench.trellisInvoke", () -> TrellisWorkloads.invoke(loop, input));
        rows.put("LoopBench.trellisRunEvents", () -> TrellisWorkloads.runCollect(loop, input));
        rows.put("FanOutBench.trellisInvoke", () -> TrellisWorkloads.invoke(fanOut, input));
        rows.put("FanOutBench.trellisRunEvents", () -> TrellisWorkloads.runCollect(fanOut, input));
        rows.put("CompositionBench.subgraphOne", () -> TrellisWorkloads.invoke(subgraphOne, input));
        rows.put("CompositionBench.subgraphLoop", () -> TrellisWorkloads.invoke(subgraphLoop, input));
        rows.put("CompositionBench.map", () -> TrellisWorkloads.invoke(map, mapInput));
        rows.put("CompositionBench.javaMap", () -> javaMap.invoke(mapInput));
        rows.put(
                "CheckpointBench.chainInMemory",
                () -> TrellisWorkloads.invokeThenDelete(
                        chain, input, TrellisWorkloads.options("r" + runs[0]++, checkpointing), store));

        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        for (Map.Entry<String, Callable<Object>> row : rows.entrySet()) {
            if (!only.matcher(row.getKey()).find()) continue;
            Callable<Object> op = row.getValue();
            long until = System.currentTimeMillis() + warmupMillis;
            while (System.currentTimeMillis() < until) op.call();
            long best = Long.MAX_VALUE;
            StringBuilder rounds = new StringBuilder();
            for (int round = 0; round < 3; round++) {
                long before = allocated(threads);
                for (int i = 0; i < operations; i++) op.call();
                long perOp = (allocated(threads) - before) / operations;
                best = Math.min(best, perOp);
                rounds.append(round == 0 ? "" : " ").append(perOp);
            }
            System.out.printf("%-34s %,10d B/op  (rounds: %s)%n", row.getKey(), best, rounds);
            if (histogramOps > 0) histogram(op, histogramOps);
        }
        System.exit(0);
    }

    /**
     * Prints what [ops] operations allocated, by class: the difference of two histograms of every object in the heap,
     * unreachable ones included ({@code GC.class_histogram -all}), taken right after a full collection and right after
     * the operations. Exact as long as no collection runs in between (a young generation far larger than what the
     * operations allocate: run with {@code -Xmn}); objects the JIT scalar-replaced are not there, as they should not be.
     */
    private static void histogram(Callable<Object> op, int ops) throws Exception {
        System.gc();
        Map<String, long[]> before = classHistogram();
        for (int i = 0; i < ops; i++) op.call();
        Map<String, long[]> after = classHistogram();
        java.util.List<Map.Entry<String, long[]>> rows = new java.util.ArrayList<>();
        for (Map.Entry<String, long[]> e : after.entrySet()) {
            long[] b = before.getOrDefault(e.getKey(), new long[2]);
            long[] d = {e.getValue()[0] - b[0], e.getValue()[1] - b[1]};
            if (d[1] != 0) rows.add(Map.entry(e.getKey(), d));
        }
        rows.sort((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]));
        for (Map.Entry<String, long[]> e : rows) {
            System.out.printf("    %10.2f x %9.1f B  %s%n",
                    (double) e.getValue()[0] / ops, (double) e.getValue()[1] / ops, e.getKey());
        }
    }

    private static Map<String, long[]> classHistogram() throws Exception {
        String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                "gcClassHistogram",
                new Object[] {new String[] {"-all"}},
                new String[] {String[].class.getName()});
        Map<String, long[]> classes = new java.util.HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || !f[0].endsWith(":")) continue;
            classes.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
        return classes;
    }

    /** The bytes every live thread allocated so far. */
    private static long allocated(ThreadMXBean threads) {
        long sum = 0;
        for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            if (bytes > 0) sum += bytes;
        }
        return sum;
    }
}
