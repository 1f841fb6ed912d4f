package dev.trellis.samples.spring;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.springai.SpringAiActions;
import java.util.List;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application that runs a Trellis graph through an HTTP endpoint ({@link GreetingController}).
 *
 * <p>The starter (trellis-spring-boot-starter) does the wiring: the graph below is a bean, its runs keep checkpoints
 * in the application's DataSource (SQLite, application.properties), and the actuator shows the runs' health
 * (/actuator/health) and metrics (/actuator/metrics/trellis.runs). The model is {@link LocalChatModel}, a Spring AI
 * ChatModel that answers without a network; any other ChatModel bean (an OpenAI or Ollama starter's) replaces it.
 *
 * <p>Start it with {@code ./mvnw -q -pl samples/spring-boot -am compile exec:java}, then
 * {@code curl -X POST localhost:8080/greetings -H 'Content-Type: application/json' -d '{"name":"Ada"}'}.
 */
@SpringBootApplication
public class TrellisSampleApplication {
    /** The state of the greeting graph. */
    public static final StateSchema SCHEMA = new StateSchema("greeting");
    /** Who to greet. */
    public static final StateKey<String> NAME = Keys.required(SCHEMA, "name", String.class);
    /** The model's greeting. */
    public static final StateKey<String> GREETING = Keys.of(SCHEMA, "greeting", String.class, "");
    /** The greeting, checked and signed. */
    public static final StateKey<String> CARD = Keys.of(SCHEMA, "card", String.class, "");

    public static void main(String[] args) {
        SpringApplication.run(TrellisSampleApplication.class, args);
    }

    /** The model: a local one unless the application has another ChatModel. */
    @Bean
    @ConditionalOnMissingBean(ChatModel.class)
    ChatModel chatModel() {
        return new LocalChatModel();
    }

    /** The graph, a bean: the starter runs it by its id, "greeting". */
    @Bean
    Graph greeting(ChatModel model) {
        return JavaGraph.builder("greeting", SCHEMA)
            .blockingNode("write", SpringAiActions.chat(model, GREETING, s -> List.of(
                new SystemMessage("Write a one-line greeting."),
                new UserMessage("Greet " + s.get(NAME)))))
            .node("sign", ctx -> ctx.set(CARD, ctx.get(GREETING).strip() + " -- Trellis"))
            .start("write")
            .edge("write", "sign")
            .build();
    }
}
