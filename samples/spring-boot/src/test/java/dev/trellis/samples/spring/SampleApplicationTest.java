package dev.trellis.samples.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** The sample started on an ephemeral port: its endpoint runs the graph, the actuator shows health and metrics. */
class SampleApplicationTest {
    private static ConfigurableApplicationContext context;
    private static int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws IOException {
        Path dir = Files.createTempDirectory("trellis-sample");
        context = SpringApplication.run(TrellisSampleApplication.class,
            "--server.port=0", "--spring.datasource.url=jdbc:sqlite:" + dir.resolve("sample.db"));
        port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    @AfterAll
    static void stop() {
        if (context != null) context.close();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Whether a metric's JSON has the measurement {"statistic": "COUNT", "value": 1.0}, its keys in either order. */
    private static boolean countIsOne(String json) {
        return json.contains("{\"statistic\":\"COUNT\",\"value\":1.0}")
            || json.contains("{\"value\":1.0,\"statistic\":\"COUNT\"}");
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Test
    void theEndpointRunsTheGraphAndTheActuatorShowsHealthAndMetrics() throws Exception {
        HttpResponse<String> greeting = send(HttpRequest.newBuilder(uri("/greetings"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"Ada\"}")));
        assertEquals(200, greeting.statusCode(), greeting.body());
        assertTrue(greeting.body().contains("\"status\":\"COMPLETED\""), greeting.body());
        assertTrue(greeting.body().contains("\"card\":\"Hello, Ada! -- Trellis\""), greeting.body());

        HttpResponse<String> health = send(HttpRequest.newBuilder(uri("/actuator/health")));
        assertEquals(200, health.statusCode(), health.body());
        String trellis = health.body().substring(health.body().indexOf("\"trellis\":{"));
        assertTrue(trellis.contains("\"status\":\"UP\""), health.body());
        assertTrue(trellis.contains("SqliteCheckpointStore"), health.body());

        HttpResponse<String> runs = send(HttpRequest.newBuilder(uri("/actuator/metrics/trellis.runs?tag=status:COMPLETED")));
        assertEquals(200, runs.statusCode(), runs.body());
        assertTrue(countIsOne(runs.body()), runs.body());

        HttpResponse<String> nodes = send(HttpRequest.newBuilder(uri("/actuator/metrics/trellis.node.duration?tag=node:write")));
        assertEquals(200, nodes.statusCode(), nodes.body());
        assertTrue(countIsOne(nodes.body()), nodes.body());
    }
}
