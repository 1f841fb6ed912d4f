package dev.trellis.graph.spec

import dev.trellis.graph.CacheKey
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeError
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Reducer
import dev.trellis.graph.State
import dev.trellis.graph.StateSchema

/** The state of the test specs: a draft written and reviewed until accepted. */
object Doc : StateSchema("doc") {
    val topic = key<String>("topic")
    val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
    val drafts = key("drafts", default = 0)
    val review = key("review", default = "")
    val approval = key("approval", default = "")
    val error = key<NodeError?>("error", default = null)
}

/** The child graph's state. */
object Part : StateSchema("part") {
    val question = key<String>("question", default = "")
    val answer = key("answer", default = emptyList<String>())
}

/** The registered functions, kept as values so that DSL graphs can use the very same objects. */
object Handlers {
    val plan: NodeBody = { set(Doc.notes, listOf("plan ${get(Doc.topic)}")) }
    val write: NodeBody = { update(Doc.drafts) { it + 1 } }
    val review: NodeBody = { set(Doc.review, if (get(Doc.drafts) >= 2) "ACCEPT" else "REVISE") }
    val fail: NodeBody = { error("always fails") }
    val recover: NodeBody = { set(Doc.notes, listOf("recovered from ${get(Doc.error)?.node}")) }
    val answer: NodeBody = { set(Part.answer, listOf("answer to ${get(Part.question)}")) }
    val accepted: (State) -> Boolean = { it[Doc.review] == "ACCEPT" }
    val pick: (State) -> NodeRef = { if (it[Doc.review] == "ACCEPT") NodeRef.END else NodeRef.of("write") }
    val byTopic = CacheKey { it[Doc.topic] }
    val passThrough = NodeInterceptor { it.proceed() }
    val note: suspend dev.trellis.graph.NodeScope.(Any?) -> Unit = { item -> set(Doc.notes, listOf("note $item")) }

    fun registry(vararg graphs: dev.trellis.graph.Graph): HandlerRegistry = handlerRegistry {
        schema(Doc)
        schema(Part)
        node("plan", plan)
        node("write", write)
        node("review", review)
        node("fail", fail)
        node("recover", recover)
        node("answer", answer)
        condition("accepted", accepted)
        selector("pick", pick)
        cacheKey("byTopic", byTopic)
        interceptor("passThrough", passThrough)
        task("note", note)
        graphs.forEach { graph(it) }
    }
}

/** Reads a spec from the test resources. */
fun spec(name: String): String = Handlers::class.java.getResource("/specs/$name")!!.readText()
