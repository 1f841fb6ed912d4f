package dev.trellis.bench;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.Locale;

/**
 * An A/B of two builds of the benchmark jar on a noisy machine, where JMH's iterations move by more than the change
 * measured: both jars are loaded in one JVM, each in a class loader of its own, and batches of one workload's
 * invocations alternate between them (A then B, B then A, ...), so that both see the same moments of the host. Prints,
 * per jar and workload, the minimum, first quartile and median over the rounds of the calling thread's CPU time per
 * invocation, and the wall time's minimum and median. The minimum is the figure least disturbed from outside.
 *
 * <p>Run it as {@code java -cp benchmarks.jar dev.trellis.bench.InterleavedAb A.jar B.jar
 * fanout,floor,one,chain,loop [rounds] [batch]}: {@code floor} is {@code BaselineBench.launch64OneThread}'s 64 empty
 * coroutines on one thread, the others the Trellis {@code invoke} of the bench's workloads (fan-out of 64 + join, one
 * node, chain of 100, loop of 1000). A workload runs on its caller's thread except a fan-out's branches that a worker
 * gives a coroutine of their own (none once the runtime learned they are quick).
 */
public final class InterleavedAb {
    private InterleavedAb() {}

    /** One invocation of a workload of one jar. */
    private interface Op {
        Object run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: InterleavedAb A.jar B.jar workload[,workload...] [rounds=300] [batch=200]");
            System.exit(2);
        }
        String[] jars = {args[0], args[1]};
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 300;
        int batch = args.length > 4 ? Integer.parseInt(args[4]) : 200;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (String workload : args[2].split(",")) {
            Op[] ops = {op(jars[0], workload), op(jars[1], workload)};
            for (int r = 0; r < 20; r++) {
                for (Op o : ops) {
                    for (int i = 0; i < batch; i++) o.run();
                }
            }
            double[][] cpu = new double[2][rounds];
            double[][] wall = new double[2][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < 2; k++) {
                    int j = r % 2 == 0 ? k : 1 - k;
                    long cpu0 = threads.getCurrentThreadCpuTime();
                    long wall0 = System.nanoTime();
                    for (int i = 0; i < batch; i++) ops[j].run();
                    cpu[j][r] = (threads.getCurrentThreadCpuTime() - cpu0) / 1000.0 / batch;
                    wall[j][r] = (System.nanoTime() - wall0) / 1000.0 / batch;
                }
            }
            for (int j = 0; j < 2; j++) {
                Arrays.sort(cpu[j]);
                Arrays.sort(wall[j]);
                System.out.printf(Locale.ROOT, "%-7s %s  cpu min %.2f  p25 %.2f  median %.2f  |  wall min %.2f  median %.2f  µs%n",
                        workload, j == 0 ? "A" : "B", cpu[j][0], cpu[j][rounds / 4], cpu[j][rounds / 2], wall[j][0],
                        wall[j][rounds / 2]);
            }
        }
    }

    /** [workload] of the jar at [path], loaded apart from this class's own copy of the workloads. */
    private static Op op(String path, String workload) throws Exception {
        File file = new File(path);
        if (!file.isFile()) throw new IllegalArgumentException("no benchmark jar at " + path);
        ClassLoader loader = new URLClassLoader(new URL[] {file.toURI().toURL()}, ClassLoader.getPlatformClassLoader());
        Class<?> workloads = Class.forName("dev.trellis.bench.TrellisWorkloads", true, loader);
        Object instance = workloads.getField("INSTANCE").get(null);
        Class<?> graph = Class.forName("dev.trellis.graph.Graph", true, loader);
        Class<?> state = Class.forName("dev.trellis.graph.State", true, loader);
        Object input = workloads.getMethod("input").invoke(instance);
        Method invoke = workloads.getMethod("invoke", graph, state);
        Object g;
        switch (workload) {
            case "floor":
                Method launch = workloads.getMethod("launchEmptyOnOneThread", int.class);
                return () -> launch.invoke(null, TrellisWorkloads.FAN_OUT);
            case "fanout":
                g = workloads.getMethod("fanOut", int.class).invoke(instance, TrellisWorkloads.FAN_OUT);
                break;
            case "one":
                g = workloads.getMethod("oneNode").invoke(instance);
                break;
            case "chain":
                g = workloads.getMethod("chain", int.class).invoke(instance, TrellisWorkloads.CHAIN);
                break;
            case "loop":
                g = workloads.getMethod("loop", int.class).invoke(instance, TrellisWorkloads.LOOP);
                break;
            default:
                throw new IllegalArgumentException(
                        "unknown workload '" + workload + "': one of floor, fanout, one, chain, loop");
        }
        Object graphOfWorkload = g;
        return () -> invoke.invoke(null, graphOfWorkload, input);
    }
}
