package dev.trellis.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.trellis.graph.Graph;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.RunResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import kotlin.Pair;
import org.junit.jupiter.api.Test;

/** The Java MCP example of {@code docs/agents.md}, as the guide shows it, against the test server. */
class McpGuideJavaTest {
    public static class Weather {
        @Tool("Current temperature in a city")
        public String temperature(@P(name = "city", value = "the city") String city) {
            return "21 C";
        }
    }

    @Test
    void aReactAgentCallsAToolOfAnMcpServerStartedWithTryWithResources() throws Exception {
        Pair<String, String[]> server = McpTestServer.serverCommand();
        String command = server.getFirst();
        String[] args = server.getSecond();
        LangChain4jJavaTest.Scripted model = new LangChain4jJavaTest.Scripted(
            AiMessage.from(List.of(ToolExecutionRequest.builder().id("1").name("add").arguments("{\"a\": 2, \"b\": 3}").build())),
            AiMessage.from("5"));
        RunResult result;

        try (McpTools mcp = McpTools.stdio(command, args)    // e.g. "npx", "-y", "@modelcontextprotocol/server-filesystem", ...
                .initializationTimeout(Duration.ofSeconds(120))
                .requestTimeout(Duration.ofSeconds(30))
                .only("add", "crash")                           // the server's tools offered to the model
                .start()) {
            Tools tools = mcp.addTo(Tools.builder().add(new Weather())).requireApproval("crash").build();
            Graph agent = ReactAgent.builder(model).tools(tools).build();
            result = Trellis.runner(agent).invoke(Map.of("messages", List.of(new Message.User("2 + 3?"))));
        }
        assertEquals("5", result.getState().get(AgentState.answer));
    }
}
