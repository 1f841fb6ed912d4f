package dev.trellis.samples.docs.persistence.evolution

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph

object Doc : StateSchema("doc", version = 2) {
    val draft = key("draft", default = "")
    val approved = key<String?>("approved", default = null)
    val title = key("title", default = "") // new in version 2
}

/** The review graph of `docs/persistence.md` at schema version 2: `approve` asks, the title is carried along. */
val reviewV2 = graph("review", Doc) {
    val write = node("write") { set(Doc.draft, "Dear customer, …") }
    val approve = node("approve") { set(Doc.approved, interrupt("Send this draft? ${get(Doc.draft)}")) }
    start(write)
    write then approve
}

/** The same graph at schema version 1, as it ran before the title was added. */
object DocV1 : StateSchema("doc", version = 1) {
    val draft = key("draft", default = "")
    val approved = key<String?>("approved", default = null)
}

val reviewV1 = graph("review", DocV1) {
    val write = node("write") { set(DocV1.draft, "Dear customer, …") }
    val approve = node("approve") { set(DocV1.approved, interrupt("Send this draft? ${get(DocV1.draft)}")) }
    start(write)
    write then approve
}
