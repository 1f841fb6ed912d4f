package dev.trellis.samples.spring;

import dev.trellis.runtime.RunResult;
import dev.trellis.springboot.TrellisRunners;
import java.util.Map;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /greetings {"name": "Ada"}} runs the greeting graph and answers with its result. */
@RestController
public class GreetingController {
    private final TrellisRunners runners;

    public GreetingController(TrellisRunners runners) {
        this.runners = runners;
    }

    /** What the endpoint takes. */
    public record GreetingRequest(String name) {}

    /** What the endpoint answers: the run's id and status, and the signed greeting. */
    public record GreetingResponse(String runId, String status, String card) {}

    @PostMapping("/greetings")
    public GreetingResponse greet(@RequestBody GreetingRequest request) throws InterruptedException {
        RunResult result = runners.runner("greeting").invoke(Map.of("name", request.name()));
        return new GreetingResponse(result.getRunId(), result.getStatus().name(),
            result.getState().get(TrellisSampleApplication.CARD));
    }
}
