package dev.trellis.studio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.fleet.FleetClient;
import dev.trellis.studio.docs.JavaStudioQuickstart;
import dev.trellis.testing.TestPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The studio's Java surface: the static start, the builder (with a fleet), the handle. */
class JavaStudioTest {
    private static int status(String url) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    @Test
    void startsInOneLineAndCloses() throws Exception {
        try (TrellisStudio studio = TrellisStudio.start(new InMemoryCheckpointStore())) {
            assertTrue(studio.getPort() > 0);
            assertEquals("http://127.0.0.1:" + studio.getPort() + "/", studio.getUrl());
            assertEquals(200, status(studio.getUrl() + "api/v1/runs"));
        }
    }

    @Test
    void startsWithGraphsOnAPort() throws Exception {
        try (TrellisStudio studio = TrellisStudio.start(new InMemoryCheckpointStore(), 0, List.of(TestGraphs.INSTANCE.getSimple()))) {
            assertEquals(200, status(studio.getUrl() + "api/v1/graphs"));
            studio.register(TestGraphs.INSTANCE.getApproval());
        }
    }

    @Test
    void theBuilderSetsHostTokenAndOwner() throws Exception {
        TrellisStudio.Builder builder = TrellisStudio.builder(new InMemoryCheckpointStore()).host("0.0.0.0");
        assertThrows(IllegalArgumentException.class, builder::start);
        try (TrellisStudio studio = builder.token("java-token-1").owner("java-studio").graphs(List.of()).start()) {
            assertEquals(401, status(studio.getUrl().replace("?token=java-token-1", "") + "api/v1/runs"));
            assertEquals(200, status(studio.getUrl().replace("/?", "/api/v1/runs?")));
        }
    }

    @Test
    void showsAFleetsQueueOverItsStore() throws Exception {
        String schema = TestPostgres.INSTANCE.newSchema();
        try (FleetClient fleet = new FleetClient(TestPostgres.INSTANCE.getDataSource(), schema);
                TrellisStudio studio = TrellisStudio.builder(fleet.getStore()).fleet(fleet).start()) {
            assertEquals(200, status(studio.getUrl() + "api/v1/fleet"));
            assertEquals(404, status(studio.getUrl() + "api/v1/runs/none/fleet"));
        } finally {
            TestPostgres.INSTANCE.dropSchema(schema);
        }
    }

    @Test
    void theDocsJavaQuickstartRuns() {
        assertTrue(JavaStudioQuickstart.run().startsWith("http://127.0.0.1:"));
    }
}
