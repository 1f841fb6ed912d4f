package dev.trellis.test.guide;

import dev.trellis.test.context.TrellisTestContext;
import dev.trellis.test.junit.TrellisTest;
import dev.trellis.test.model.ScriptedAnswer;
import dev.trellis.test.model.ScriptedChatModel;
import java.util.Map;
import org.junit.jupiter.api.Test;

@TrellisTest // a fresh store per test, virtual time, the timeline page of a failing test
class TriageGuideJavaTest {
    @Test
    void aBillingTicketIsClassifiedThenAnswered(TrellisTestContext trellis) {
        ScriptedChatModel model = ScriptedChatModel.builder()
            .whenPrompt("Classify", ScriptedAnswer.text("billing"))
            .whenPrompt("Reply", ScriptedAnswer.text("Your refund is on its way."))
            .build();

        trellis.run(TriageGuideTestKt.triageGraph(model), Triage.INSTANCE.stateOf(Map.of("ticket", "I was charged twice")));

        trellis.trajectory()
            .assertNodes("classify", "reply")
            .assertStateAfter("classify", Triage.INSTANCE.getCategory(), "billing")
            .assertFinalState(Triage.INSTANCE.getReply(), "Your refund is on its way.");
    }
}
