package dev.trellis.springboot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import dev.trellis.testing.TestPostgres;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The starter from Java, as docs/spring.md shows it: a graph as a bean, run by its id, on PostgreSQL. */
class StarterJavaTest {
    static final StateSchema SCHEMA = new StateSchema("java-greeting");
    static final StateKey<String> NAME = Keys.required(SCHEMA, "name", String.class);
    static final StateKey<String> TEXT = Keys.of(SCHEMA, "text", String.class, "");

    private final String schema = TestPostgres.INSTANCE.newSchema();

    @Configuration(proxyBeanMethods = false)
    static class GreetingGraphs {
        @Bean
        Graph greeting() {
            return JavaGraph.builder("greeting", SCHEMA)
                .node("greet", ctx -> ctx.set(TEXT, "Hello, " + ctx.get(NAME) + "!"))
                .start("greet")
                .build();
        }
    }

    @AfterEach
    void dropSchema() {
        TestPostgres.INSTANCE.dropSchema(schema);
    }

    @Test
    void aGraphBeanRunsByItsIdWithCheckpointsInPostgres() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TrellisAutoConfiguration.class))
            .withBean(DataSource.class, () -> TestPostgres.INSTANCE.getDataSource())
            .withUserConfiguration(GreetingGraphs.class)
            .withPropertyValues("trellis.store.schema=" + schema)
            .run(context -> {
                TrellisRunners runners = context.getBean(TrellisRunners.class);
                RunResult result = runners.runner("greeting").invoke(Map.of("name", "Ada"));
                assertEquals(Status.COMPLETED, result.getStatus());
                assertEquals("Hello, Ada!", result.getState().get(TEXT));
                assertEquals(1, runners.getOptions().getCheckpointing().stream().count());
            });
    }
}
