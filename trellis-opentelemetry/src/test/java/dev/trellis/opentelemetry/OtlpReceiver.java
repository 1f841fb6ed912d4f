package dev.trellis.opentelemetry;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An OTLP/HTTP trace receiver on an ephemeral port, as a collector or Jaeger listens on 4318: it accepts
 * {@code POST /v1/traces} with a protobuf {@code ExportTraceServiceRequest}, answers 200, and decodes the spans' ids,
 * parents and names from the wire format (only the fields read here; see opentelemetry-proto's trace.proto).
 */
final class OtlpReceiver implements AutoCloseable {
    /** One received span. */
    record ReceivedSpan(String traceId, String spanId, String parentSpanId, String name) {}

    private final HttpServer server;
    private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
    private final List<String> contentTypes = new CopyOnWriteArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    OtlpReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/traces", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                if (!exchange.getRequestMethod().equals("POST")) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                contentTypes.add(String.valueOf(exchange.getRequestHeaders().getFirst("Content-Type")));
                spans.addAll(decodeRequest(body.readAllBytes()));
                exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, 0);
                exchange.getResponseBody().close(); // an empty ExportTraceServiceResponse
            }
        });
        // Exchanges on a pool of their own, so that one slow exchange does not hold up the server's accepting thread.
        server.setExecutor(executor);
        server.start();
    }

    /** The base endpoint, as {@code OTEL_EXPORTER_OTLP_ENDPOINT} takes it. */
    String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    List<ReceivedSpan> spans() {
        return List.copyOf(spans);
    }

    List<String> contentTypes() {
        return List.copyOf(contentTypes);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    // ExportTraceServiceRequest.resource_spans = 1; ResourceSpans.scope_spans = 2; ScopeSpans.spans = 2;
    // Span: trace_id = 1, span_id = 2, parent_span_id = 4, name = 5.
    private static List<ReceivedSpan> decodeRequest(byte[] request) {
        List<ReceivedSpan> found = new ArrayList<>();
        for (byte[] resourceSpans : fields(request, 1)) {
            for (byte[] scopeSpans : fields(resourceSpans, 2)) {
                for (byte[] span : fields(scopeSpans, 2)) {
                    found.add(new ReceivedSpan(hex(first(span, 1)), hex(first(span, 2)), hex(first(span, 4)),
                        new String(first(span, 5), StandardCharsets.UTF_8)));
                }
            }
        }
        return found;
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    private static byte[] first(byte[] message, int field) {
        List<byte[]> values = fields(message, field);
        return values.isEmpty() ? new byte[0] : values.get(0);
    }

    /** The length-delimited values of [field] in [message], skipping every other field by its wire type. */
    private static List<byte[]> fields(byte[] message, int field) {
        List<byte[]> values = new ArrayList<>();
        int[] at = {0};
        while (at[0] < message.length) {
            long tag = varint(message, at);
            int wireType = (int) (tag & 7);
            switch (wireType) {
                case 0 -> varint(message, at);
                case 1 -> at[0] += 8;
                case 5 -> at[0] += 4;
                case 2 -> {
                    int length = (int) varint(message, at);
                    if ((tag >>> 3) == field) {
                        byte[] value = new byte[length];
                        System.arraycopy(message, at[0], value, 0, length);
                        values.add(value);
                    }
                    at[0] += length;
                }
                default -> throw new IllegalArgumentException("Unexpected protobuf wire type " + wireType);
            }
        }
        return values;
    }

    private static long varint(byte[] message, int[] at) {
        long value = 0;
        for (int shift = 0; ; shift += 7) {
            byte b = message[at[0]++];
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) return value;
        }
    }
}
