package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.opentelemetry.TrellisTelemetry;
import dev.trellis.runtime.RunOptions;
import dev.trellis.runtime.RunResult;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
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
 * The cost of tracing (issue 19, {@code bench/HISTORY.md}): the chain of 100 run untraced ({@code Graph.invoke},
 * as {@code ChainBench.trellisInvoke}), through {@code TrellisTelemetry} with the no-op OpenTelemetry (what tracing
 * costs when no SDK is installed), and with an SDK that samples every span and hands each to an exporter that drops
 * it (the cost of making the spans: a run span and 100 node spans per run, plus the metrics). All blocking calls
 * from the benchmark thread, so the three differ only in the telemetry.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@org.openjdk.jmh.annotations.State(Scope.Benchmark)
public class TracedChainBench {
    private Graph chain;
    private State input;
    private TrellisTelemetry noop;
    private TrellisTelemetry sdk;
    private OpenTelemetrySdk openTelemetry;

    /** An exporter that drops every span: the export path is the SDK's, the backend is not measured. */
    private static final class Dropping implements SpanExporter {
        @Override
        public CompletableResultCode export(Collection<SpanData> spans) {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }

    @Setup
    public void setUp() {
        chain = TrellisWorkloads.INSTANCE.chain(TrellisWorkloads.CHAIN);
        input = TrellisWorkloads.INSTANCE.input();
        noop = new TrellisTelemetry(OpenTelemetry.noop());
        openTelemetry = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(new Dropping())).build())
            .build();
        sdk = new TrellisTelemetry(openTelemetry);
        Check.equal("untraced n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(untraced()));
        Check.equal("noop n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(tracedNoop()));
        Check.equal("sdk n", TrellisWorkloads.CHAIN, TrellisWorkloads.counter(tracedSdk()));
    }

    @TearDown
    public void tearDown() {
        openTelemetry.close();
    }

    /** No telemetry: {@code Graph.invoke} in {@code runBlocking}. */
    @Benchmark
    public RunResult untraced() {
        return TrellisWorkloads.invoke(chain, input);
    }

    /** {@code TrellisTelemetry.invokeBlocking} with the no-op OpenTelemetry. */
    @Benchmark
    public RunResult tracedNoop() {
        return noop.invokeBlocking(chain, input, RunOptions.DEFAULT);
    }

    /** {@code TrellisTelemetry.invokeBlocking} with an SDK recording every span (exported to nowhere). */
    @Benchmark
    public RunResult tracedSdk() {
        return sdk.invokeBlocking(chain, input, RunOptions.DEFAULT);
    }
}
