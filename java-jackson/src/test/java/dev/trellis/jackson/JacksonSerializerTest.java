package dev.trellis.jackson;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import kotlinx.serialization.KSerializer;
import kotlinx.serialization.SerializationException;
import kotlinx.serialization.encoding.AbstractEncoder;
import kotlinx.serialization.json.Json;
import kotlinx.serialization.modules.SerializersModule;
import kotlinx.serialization.modules.SerializersModuleBuildersKt;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

class JacksonSerializerTest {
    enum Priority { LOW, HIGH }

    record Address(String street, Optional<String> floor) {}

    record Order(String id, Priority priority, Instant placedAt, LocalDate due, Duration sla,
                 Optional<String> note, List<List<Integer>> matrix, Address address, BigDecimal total) {}

    private static <T> T roundTrip(KSerializer<T> serializer, T value) {
        String json = Json.Default.encodeToString(serializer, value);
        return Json.Default.decodeFromString(serializer, json);
    }

    private static Order order() {
        return new Order("42", Priority.HIGH, Instant.parse("2026-01-02T03:04:05.123456789Z"), LocalDate.of(2026, 2, 3),
            Duration.ofMinutes(90), Optional.of("ring twice"), List.of(List.of(1, 2), List.of(), List.of(3)),
            new Address("Main St 1", Optional.empty()), new BigDecimal("12345678901234567890.000000000001"));
    }

    @Test
    void recordsWithEnumsOptionalsTimesAndNestedListsRoundTrip() {
        Order order = order();
        assertEquals(order, roundTrip(JacksonSerializer.of(Order.class), order));
    }

    @Test
    void javaTimeIsWrittenAsIso8601() {
        String json = Json.Default.encodeToString(JacksonSerializer.of(Order.class), order());
        assertTrue(json.contains("\"placedAt\":\"2026-01-02T03:04:05.123456789Z\""), json);
        assertTrue(json.contains("\"due\":\"2026-02-03\""), json);
        assertTrue(json.contains("\"sla\":\"PT1H30M\""), json);
        assertTrue(json.contains("\"priority\":\"HIGH\""), json);
        assertTrue(json.contains("\"floor\":null"), json);
    }

    @Test
    void topLevelValuesRoundTrip() {
        assertEquals(Priority.LOW, roundTrip(JacksonSerializer.of(Priority.class), Priority.LOW));
        assertEquals(7, roundTrip(JacksonSerializer.of(Integer.class), 7));
        assertEquals("text", roundTrip(JacksonSerializer.of(String.class), "text"));
        OffsetDateTime time = OffsetDateTime.of(2026, 1, 2, 3, 4, 5, 0, ZoneOffset.ofHours(2));
        assertEquals(time, roundTrip(JacksonSerializer.of(OffsetDateTime.class), time));
        ZonedDateTime zoned = ZonedDateTime.of(2026, 7, 1, 12, 0, 0, 0, ZoneId.of("Europe/Berlin"));
        assertEquals(zoned, roundTrip(JacksonSerializer.of(ZonedDateTime.class), zoned));
        KSerializer<Optional<String>> optional = JacksonSerializer.of(new TypeReference<Optional<String>>() {});
        assertEquals(Optional.of("x"), roundTrip(optional, Optional.of("x")));
        assertEquals(Optional.empty(), roundTrip(optional, Optional.empty()));
    }

    @Test
    void genericTypesKeepTheirElementTypes() {
        KSerializer<List<Order>> orders = JacksonSerializer.of(new TypeReference<List<Order>>() {});
        List<Order> back = roundTrip(orders, List.of(order(), order()));
        assertEquals(List.of(order(), order()), back);
        assertEquals(Order.class, back.get(0).getClass());

        KSerializer<List<Address>> addresses = JacksonSerializer.listOf(Address.class);
        Address address = new Address("a", Optional.of("3"));
        assertEquals(List.of(address), roundTrip(addresses, List.of(address)));

        KSerializer<Map<String, List<Priority>>> map = JacksonSerializer.of(new TypeReference<Map<String, List<Priority>>>() {});
        assertEquals(Map.of("k", List.of(Priority.HIGH, Priority.LOW)), roundTrip(map, Map.of("k", List.of(Priority.HIGH, Priority.LOW))));
        KSerializer<Map<String, Integer>> counts = JacksonSerializer.mapOf(String.class, Integer.class);
        assertEquals(Map.of("a", 1), roundTrip(counts, Map.of("a", 1)));
    }

    @Test
    void nullsRoundTrip() {
        KSerializer<Address> serializer = JacksonSerializer.of(Address.class);
        assertEquals("null", Json.Default.encodeToString(serializer, null));
        assertNull(Json.Default.decodeFromString(serializer, "null"));
        Address withNulls = new Address(null, Optional.empty());
        assertEquals(withNulls, roundTrip(serializer, withNulls));
        List<String> withNullElement = java.util.Arrays.asList("a", null);
        assertEquals(withNullElement, roundTrip(JacksonSerializer.listOf(String.class), withNullElement));
    }

    @Test
    void embedsInKotlinxJsonTreesAsJson() {
        String json = Json.Default.encodeToString(JacksonSerializer.of(Address.class), new Address("s", Optional.of("2")));
        assertEquals(Json.Default.parseToJsonElement("{\"street\":\"s\",\"floor\":\"2\"}"), Json.Default.parseToJsonElement(json));
    }

    @Test
    void customMappersAreUsed() {
        JsonMapper mapper = JsonMapper.builder().build();
        JacksonSerializer<Address> serializer = JacksonSerializer.of(Address.class, mapper);
        assertEquals(new Address("x", Optional.empty()), roundTrip(serializer, new Address("x", Optional.empty())));
        JacksonSerializer<Address> byType = JacksonSerializer.of(mapper.constructType(Address.class), mapper);
        assertEquals(serializer, byType);
        assertEquals("dev.trellis.jackson.JacksonSerializerTest$Address", serializer.getDescriptor().getSerialName());
    }

    @Test
    void readingBadJsonFailsWithTheTypeAndTheInput() {
        SerializationException e = assertThrows(SerializationException.class,
            () -> Json.Default.decodeFromString(JacksonSerializer.of(Priority.class), "\"MEDIUM\""));
        assertTrue(e.getMessage().contains("JacksonSerializerTest$Priority"), e.getMessage());
        assertTrue(e.getMessage().contains("MEDIUM"), e.getMessage());
    }

    @Test
    void otherFormatsFailWithAClearMessage() {
        AbstractEncoder notJson = new AbstractEncoder() {
            @Override
            public SerializersModule getSerializersModule() {
                return SerializersModuleBuildersKt.EmptySerializersModule();
            }
        };
        SerializationException e = assertThrows(SerializationException.class,
            () -> JacksonSerializer.of(String.class).serialize(notJson, "x"));
        assertTrue(e.getMessage().contains("only write values with the kotlinx Json format"), e.getMessage());
        assertTrue(e.getMessage().contains("java.lang.String"), e.getMessage());
    }
}
