package dev.trellis.test.eval

import com.networknt.schema.InputFormat
import com.networknt.schema.SchemaRegistry
import com.networknt.schema.SpecificationVersion
import tools.jackson.core.JacksonException
import tools.jackson.databind.json.JsonMapper

/** JSON Schema validation of outputs (networknt json-schema-validator). */
internal object JsonSchemas {
    private val registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
    private val mapper = JsonMapper.builder().build()

    fun check(schema: String, output: String): Score {
        val document = try {
            mapper.readTree(output.trim().removeSurrounding("```json", "```").trim())
        } catch (e: JacksonException) {
            return Score.fail("the output is not JSON (${e.originalMessage}): \"${Scorers.short(output)}\"")
        }
        val errors = registry.getSchema(schema, InputFormat.JSON).validate(document)
        return if (errors.isEmpty()) {
            Score.pass("valid against the schema")
        } else {
            Score.fail("${errors.size} schema error(s): " + errors.take(3).joinToString("; ") { it.toString() })
        }
    }
}
