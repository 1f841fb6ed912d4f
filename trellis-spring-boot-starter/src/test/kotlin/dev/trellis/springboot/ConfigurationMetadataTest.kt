package dev.trellis.springboot

import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Test
import java.beans.Introspector

/** The hand-written configuration metadata names every property of [TrellisProperties], and no other. */
class ConfigurationMetadataTest {
    private val metadata = Json.parseToJsonElement(
        javaClass.getResource("/META-INF/spring-configuration-metadata.json")!!.readText(),
    ).jsonObject

    @Test
    fun `every trellis property is in the metadata with its default`() {
        val documented = metadata.getValue("properties").jsonArray.map { it.jsonObject }
            .associate { it.getValue("name").jsonPrimitive.content to it["defaultValue"]?.jsonPrimitive?.content }
            .filterKeys { it.startsWith("trellis.") }
        documented shouldBe properties("trellis", TrellisProperties())
    }

    /** The leaf properties of [bean] (Java bean getters), by their kebab-case names, with their default values. */
    private fun properties(prefix: String, bean: Any): Map<String, String?> =
        Introspector.getBeanInfo(bean.javaClass, Any::class.java).propertyDescriptors.flatMap { property ->
            val value = property.readMethod.invoke(bean)
            val name = "$prefix.${property.name.replace(Regex("([A-Z])")) { "-" + it.value.lowercase() }}"
            if (value != null && value.javaClass.name.startsWith(TrellisProperties::class.java.name + "$") &&
                !value.javaClass.isEnum
            ) {
                properties(name, value).toList()
            } else {
                listOf(name to value?.let(::format))
            }
        }.toMap()

    private fun format(value: Any): String = when (value) {
        is java.time.Duration -> "${value.seconds}s"
        is Enum<*> -> value.name.lowercase()
        else -> value.toString()
    }
}
