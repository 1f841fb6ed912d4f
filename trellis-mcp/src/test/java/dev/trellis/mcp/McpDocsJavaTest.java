package dev.trellis.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.langchain4j.Conversation;
import dev.trellis.langchain4j.Message;
import dev.trellis.langchain4j.ReactAgent;
import dev.trellis.langchain4j.Tools;
import dev.trellis.mcp.docs.Clock;
import dev.trellis.runtime.RunResult;
import jakarta.servlet.http.HttpServlet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import kotlin.Pair;
import org.junit.jupiter.api.Test;

/** The Java snippets of docs/agents.md, "MCP tools", as they are there, each run against a test server. */
class McpDocsJavaTest {
    private static List<String> toolResults(JavaFixtures.Scripted model, int call) {
        return model.requests.get(call).messages().stream()
            .filter(m -> m instanceof ToolExecutionResultMessage)
            .map(m -> ((ToolExecutionResultMessage) m).text()).toList();
    }

    private static AiMessage calls(String name, String arguments) {
        return AiMessage.from(List.of(ToolExecutionRequest.builder().id("1").name(name).arguments(arguments).build()));
    }

    @Test
    void stdioToolsNextToALocalTool() throws Exception {
        Pair<String, String[]> server = McpTestServer.serverCommand();
        String command = server.getFirst();
        String[] args = server.getSecond();
        String apiKey = "test-key";
        JavaFixtures.Scripted model = new JavaFixtures.Scripted(
            AiMessage.from(List.of(
                ToolExecutionRequest.builder().id("1").name("temperature")
                    .arguments("{\"city\": \"Oslo\", \"unit\": \"CELSIUS\"}").build(),
                ToolExecutionRequest.builder().id("2").name("now").arguments("{}").build())),
            AiMessage.from("Oslo is 21 C at noon."));

        try (McpTools weather = McpTools.stdio(command, args)
                .env("WEATHER_API_KEY", apiKey)
                .requestTimeout(Duration.ofSeconds(30))
                .initializationTimeout(Duration.ofMinutes(2))
                .start()) {
            Tools tools = weather.addTo(Tools.builder().add(new Clock())).build();
            Graph agent = ReactAgent.builder(model).tools(tools).maxSteps(5).build();
            RunResult result = Trellis.runner(agent).invoke(Map.of("messages", List.of(new Message.User("Weather in Oslo?"))));
        }
        assertEquals(2, model.requests.size()); // the calls, then the answer
        assertEquals(List.of("Oslo: 21 C", "12:00"), toolResults(model, 1));
    }

    @Test
    void remoteToolsWithAToken() throws Exception {
        try (HttpTestServer server = new HttpTestServer(null, "s3cret")) {
            String url = server.getUrl();
            String token = "s3cret";
            JavaFixtures.Scripted model = new JavaFixtures.Scripted(
                calls("temperature", "{\"city\": \"Oslo\", \"unit\": \"CELSIUS\"}"), AiMessage.from("21 C."));

            try (McpTools remote = McpTools.http(url)
                    .header("Authorization", "Bearer " + token)
                    .connectTimeout(Duration.ofSeconds(5))
                    .requestTimeout(Duration.ofSeconds(30))
                    .start()) {
                Graph agent = ReactAgent.builder(model).tools(remote.getTools()).build();
                RunResult result = Trellis.runner(agent).invoke(Map.of("messages", List.of(new Message.User("Weather in Oslo?"))));
            }
            assertEquals(2, model.requests.size());
            assertEquals(List.of("Oslo: 21 C"), toolResults(model, 1));
            assertEquals(List.of("temperature Oslo"), server.getCalls());
        }
    }

    @Test
    void aResourceAndAPromptReadByBlockingNodes() throws Exception {
        StateSchema schema = new StateSchema("java-desk");
        StateKey<String> topic = Keys.required(schema, "topic", String.class);
        StateKey<String> guide = Keys.of(schema, "guide", String.class, "");
        StateKey<List<Message>> messages = Conversation.key(schema, "messages");
        try (HttpTestServer server = new HttpTestServer(); McpTools docs = McpTools.http(server.getUrl()).start()) {
            Graph desk = JavaGraph.builder("desk", schema)
                .blockingNode("guide", McpActions.readResource(docs, guide, s -> "file:///guides/" + s.get(topic) + ".md"))
                .blockingNode("brief", McpActions.prompt(docs, "summarize", messages, s -> Map.of("topic", s.get(topic))))
                .start("guide")
                .edge("guide", "brief")
                .build();

            RunResult result = Trellis.runner(desk).invoke(Map.of("topic", "mcp"));
            assertEquals("# MCP\nTools, resources and prompts.", result.getState().get(guide));
            assertEquals(
                List.of(new Message.User("Summarize what you know about mcp."), new Message.Ai("Here is what I know about mcp:", List.of())),
                result.getState().get(messages));
            assertEquals(2, docs.resources().size());
            assertEquals("summarize", docs.prompts().get(0).getName());
        }
    }

    @Test
    void aGraphServedOverHttpToTheSdkClient() throws Exception {
        StateSchema schema = new StateSchema("java-trip");
        StateKey<String> city = Keys.required(schema, "city", String.class);
        StateKey<Integer> days = Keys.of(schema, "days", Integer.class, 1);
        StateKey<String> plan = Keys.of(schema, "plan", String.class, "");
        Graph trip = JavaGraph.builder("trip", schema)
            .node("plan", c -> c.set(plan, c.get(days) + " days in " + c.get(city)))
            .start("plan")
            .build();

        McpGraphServer server = McpGraphServer.builder("trip-planner", "1.0")
            .tool(McpGraphTool.builder("plan_trip", trip)
                .description("Plans a trip to a city")
                .input(city, "the city to visit")
                .input(days, "how many days")
                .output(plan)
                .build())
            .build();
        HttpServlet servlet = server.httpServlet("/mcp");

        try (JettyServer jetty = new JettyServer(servlet);
             McpTools trips = McpTools.http("http://127.0.0.1:" + jetty.getPort() + "/mcp").start()) {
            assertEquals("3 days in Oslo", trips.call("plan_trip", "{\"city\": \"Oslo\", \"days\": 3}"));
            assertEquals(List.of("plan_trip"), trips.getNames());
        }
    }
}
