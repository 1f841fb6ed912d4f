package dev.trellis.graph

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.Json

/** NodeError and TaskError are values whose checkpoint form is the one they had as data classes. */
class ErrorValuesTest : FunSpec({
    val nodeError = NodeError("search", "java.io.IOException", "down", 3)
    val taskErrors = listOf(TaskError(0, "java.lang.IllegalStateException", null), TaskError(2, "E", "bad"))

    test("errors saved in the earlier checkpoint format decode, and encode to the same text") {
        val savedError = """{"node":"search","type":"java.io.IOException","message":"down","attempts":3}"""
        val savedTasks = """[{"index":0,"type":"java.lang.IllegalStateException","message":null},""" +
            """{"index":2,"type":"E","message":"bad"}]"""
        Json.decodeFromString(NodeError.serializer(), savedError) shouldBe nodeError
        Json.encodeToString(NodeError.serializer(), nodeError) shouldBe savedError
        Json.decodeFromString(ListSerializer(TaskError.serializer()), savedTasks) shouldBe taskErrors
        Json.encodeToString(ListSerializer(TaskError.serializer()), taskErrors) shouldBe savedTasks
        NodeError.serializer().descriptor.serialName shouldBe "dev.trellis.graph.NodeError"
    }

    test("keys of error types find their serializer as any serializable type") {
        val schema = object : StateSchema("error-values") {
            val error = key<NodeError?>("error", default = null)
            val errors = key<List<TaskError>>("errors", default = emptyList())
        }
        val encoded = Json.encodeToString(schema.error.serializer, nodeError)
        encoded shouldBe Json.encodeToString(NodeError.serializer(), nodeError)
        val tasks = Json.encodeToString(schema.errors.serializer, taskErrors)
        Json.decodeFromString(schema.errors.serializer, tasks) shouldBe taskErrors
    }

    test("they are values: equal by their properties, printed with them") {
        NodeError("search", "java.io.IOException", "down", 3) shouldBe nodeError
        NodeError("search", "java.io.IOException", "down", 3).hashCode() shouldBe nodeError.hashCode()
        NodeError("search", "java.io.IOException", "down", 4) shouldNotBe nodeError
        nodeError.toString() shouldBe "NodeError(node=search, type=java.io.IOException, message=down, attempts=3)"
        taskErrors[0].toString() shouldBe "TaskError(index=0, type=java.lang.IllegalStateException, message=null)"
        TaskError(2, "E", "bad") shouldBe taskErrors[1]
    }
})
