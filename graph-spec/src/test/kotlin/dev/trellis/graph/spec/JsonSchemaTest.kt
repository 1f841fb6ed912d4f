package dev.trellis.graph.spec

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject

/** The published JSON Schema names every field the loader reads. */
class JsonSchemaTest : FunSpec({
    val schema = Json.parseToJsonElement(GraphSpec.jsonSchema()).jsonObject
    val defs = schema.getValue("\$defs").jsonObject

    fun properties(def: String): Set<String> = (defs.getValue(def).jsonObject.getValue("properties") as JsonObject).keys

    test("the schema is draft 2020-12 and its sections list the fields the loader accepts") {
        schema.getValue("\$schema").toString() shouldBe "\"https://json-schema.org/draft/2020-12/schema\""
        (schema.getValue("properties") as JsonObject).keys shouldBe setOf("format", "main", "graphs")
        properties("graph") shouldBe setOf("description", "state", "start", "nodes", "edges", "config")
        properties("node") shouldContainAll NodeLoader.KINDS
        properties("edge") shouldBe
            setOf("from", "to", "when", "route", "targets", "firstMatch", "otherwise", "onFailure", "error")
        properties("config") shouldBe setOf(
            "maxNodeExecutions",
            "executionTimeout",
            "maxConcurrency",
            "failFast",
            "defaultNodeTimeout",
            "defaultRetry",
            "interceptors",
            "defaultOnFailure",
        )
    }
})
