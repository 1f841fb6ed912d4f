package dev.trellis.bench;

import java.util.Arrays;
import java.util.Locale;

/**
 * Where a PostgreSQL checkpoint per step goes, on a machine whose disk and host move JMH's figures by more than the
 * parts measured: {@link PostgresCheckpointBench}'s {@code chainSync}, {@code storeOnly}, {@code jdbcInsertOnly} and
 * {@code chainPlain} run in rotating order, round after round, in one JVM, and each round's differences are taken
 * between runs made seconds apart: the SYNC run minus the store's own traffic is the runtime's part of a step, the
 * store's traffic minus as many plain durable inserts is the store's (its fencing), the plain insert the floor (the
 * server's commit, one round trip, the driver and the pool). Prints per-run percentiles and the medians of the paired
 * differences per write.
 *
 * <p>Run it as {@code java -cp benchmarks.jar dev.trellis.bench.PostgresStepProbe [rounds=80] [warm-up rounds=40]},
 * with the server of {@link PostgresCheckpointBench#URL_VARIABLE} (by default the local one).
 */
public final class PostgresStepProbe {
    private PostgresStepProbe() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 80;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        PostgresCheckpointBench bench = new PostgresCheckpointBench();
        bench.setUp();
        String[] names = {"chainSync", "storeOnly", "jdbcInsertOnly", "chainPlain"};
        Runnable[] runs = {bench::chainSync, bench::storeOnly, bench::jdbcInsertOnly, bench::chainPlain};
        double[][] micros = new double[runs.length][rounds];
        try {
            for (int w = 0; w < warmup; w++) {
                for (Runnable run : runs) run.run();
            }
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < runs.length; k++) {
                    int j = (k + r) % runs.length;
                    long start = System.nanoTime();
                    runs[j].run();
                    micros[j][r] = (System.nanoTime() - start) / 1000.0;
                }
            }
        } finally {
            bench.tearDown();
        }
        int writes = TrellisWorkloads.CHAIN + 2;
        for (int j = 0; j < runs.length; j++) {
            double[] sorted = micros[j].clone();
            Arrays.sort(sorted);
            System.out.printf(Locale.ROOT, "%-15s per run: min %.0f  p25 %.0f  median %.0f  p75 %.0f µs%n", names[j],
                    sorted[0], sorted[rounds / 4], sorted[rounds / 2], sorted[3 * rounds / 4]);
        }
        System.out.printf(Locale.ROOT,
                "per write, medians of paired differences: runtime (chainSync - storeOnly) %.1f µs, "
                        + "store (storeOnly - jdbcInsertOnly) %.1f µs; floor (jdbcInsertOnly) %.1f µs%n",
                pairedMedian(micros[0], micros[1]) / TrellisWorkloads.CHAIN,
                pairedMedian(micros[1], micros[2]) / writes,
                median(micros[2]) / writes);
    }

    private static double pairedMedian(double[] a, double[] b) {
        double[] d = new double[a.length];
        for (int i = 0; i < a.length; i++) d[i] = a[i] - b[i];
        return median(d);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
