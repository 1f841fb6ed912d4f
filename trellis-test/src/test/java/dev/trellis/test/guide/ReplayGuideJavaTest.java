package dev.trellis.test.guide;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.model.chat.ChatModel;
import dev.trellis.runtime.RunResult;
import dev.trellis.test.context.TrellisTestContext;
import dev.trellis.test.junit.TrellisTest;
import dev.trellis.test.model.ScriptedAnswer;
import dev.trellis.test.model.ScriptedChatModel;
import dev.trellis.test.replay.Cassette;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

@TrellisTest
class ReplayGuideJavaTest {
    /** Your real model (an OpenAiChatModel with a key, say); this guide scripts one so that it runs anywhere. */
    private ChatModel realModel() {
        return ScriptedChatModel.builder()
            .whenPrompt("Classify", ScriptedAnswer.text("tech"))
            .whenPrompt("Reply", ScriptedAnswer.text("Please restart the router."))
            .build();
    }

    @Test
    void theTriageGraphReplaysItsRecordedModelCalls(TrellisTestContext trellis) {
        try (Cassette cassette = Cassette.open(Path.of("src/test/resources/cassettes/triage.json"))) {
            ChatModel model = cassette.chatModel(cassette.isRecording() ? realModel() : null);
            RunResult result = trellis.run(TriageGuideTestKt.triageGraph(model),
                Triage.INSTANCE.stateOf(Map.of("ticket", "My internet is down")));
            assertEquals("Please restart the router.", result.getState().get(Triage.INSTANCE.getReply()));
        }
    }
}
