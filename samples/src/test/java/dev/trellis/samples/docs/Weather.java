package dev.trellis.samples.docs;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;

public class Weather {
    @Tool("Current temperature in a city")
    public String temperature(@P(name = "city", value = "the city") String city) {
        return "21 C";
    }
}
