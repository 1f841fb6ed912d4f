package dev.trellis.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;
import kotlinx.serialization.builtins.BuiltinSerializersKt;
import kotlinx.serialization.json.Json;
import org.junit.jupiter.api.Test;

/** Messages and tool calls from Java: values, and their serializers reached as static methods. */
class MessageJavaTest {
    @Test
    void messagesAreValuesWithStaticSerializers() {
        List<Message> conversation = List.of(
            new Message.User("Weather in Paris?"),
            new Message.Ai(null, List.of(new ToolCall("c1", "temperature", "{}"))),
            new Message.Ai("21 C."));
        String json = Json.Default.encodeToString(BuiltinSerializersKt.ListSerializer(Message.serializer()), conversation);
        assertEquals(conversation, Json.Default.decodeFromString(BuiltinSerializersKt.ListSerializer(Message.serializer()), json));
        assertEquals(new ToolCall("c1", "t", "{}"),
            Json.Default.decodeFromString(ToolCall.serializer(), "{\"id\":\"c1\",\"name\":\"t\",\"arguments\":\"{}\"}"));
        assertEquals(new Message.Ai(), new Message.Ai(null));
        assertNotEquals(new Message.User("x"), new Message.System("x"));
    }
}
