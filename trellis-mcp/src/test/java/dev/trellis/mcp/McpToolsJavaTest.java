package dev.trellis.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.trellis.graph.Graph;
import dev.trellis.javaapi.Trellis;
import dev.trellis.langchain4j.AgentState;
import dev.trellis.langchain4j.Message;
import dev.trellis.langchain4j.ReactAgent;
import dev.trellis.langchain4j.Tools;
import dev.trellis.runtime.RunResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import kotlin.Pair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MCP tools from Java: a server started with try-with-resources, its tools next to a Java @Tool object. */
class McpToolsJavaTest {
    @Test
    void aReactAgentWithMcpToolsAndAJavaToolObject(@TempDir Path dir) throws Exception {
        Pair<String, String[]> command = McpTestServer.serverCommand();
        Path log = dir.resolve("calls.log");
        JavaFixtures.Calculator calculator = new JavaFixtures.Calculator();
        try (McpTools mcp = McpTools.stdio(command.getFirst(), command.getSecond())
                .env("TRELLIS_MCP_LOG", log.toString())
                .only("temperature")
                .requestTimeout(Duration.ofSeconds(60))
                .maxConcurrentCalls(4)
                .initializationTimeout(Duration.ofSeconds(120))
                .start()) {
            Tools tools = mcp.addTo(Tools.builder().add(calculator)).build();
            JavaFixtures.Scripted model = new JavaFixtures.Scripted(
                AiMessage.from(List.of(
                    ToolExecutionRequest.builder().id("1").name("temperature")
                        .arguments("{\"city\": \"Oslo\", \"unit\": \"CELSIUS\"}").build(),
                    ToolExecutionRequest.builder().id("2").name("add").arguments("{\"a\": 1, \"b\": 2}").build())),
                AiMessage.from("Oslo is 21 C; 1 + 2 = 3."));
            Graph agent = ReactAgent.builder(model).tools(tools).maxSteps(3).build();

            RunResult result = Trellis.runner(agent)
                .invoke(Map.of("messages", List.of(new Message.User("Weather in Oslo, and 1 + 2?"))));

            assertEquals("Oslo is 21 C; 1 + 2 = 3.", result.getState().get(AgentState.answer));
            assertEquals(List.of("add", "temperature"), tools.getNames());
            assertEquals(List.of("Oslo: 21 C", "3"),
                model.requests.get(1).messages().stream()
                    .filter(m -> m instanceof ToolExecutionResultMessage)
                    .map(m -> ((ToolExecutionResultMessage) m).text()).toList());
            assertEquals(1, calculator.calls.get());
            assertEquals(List.of("temperature Oslo"), Files.readAllLines(log));
        }
    }
}
