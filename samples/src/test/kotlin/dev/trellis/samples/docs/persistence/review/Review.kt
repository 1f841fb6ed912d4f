package dev.trellis.samples.docs.persistence.review

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import java.util.concurrent.CopyOnWriteArrayList

/** What the review graph of `docs/persistence.md` ("Interrupts") sends: the test reads it. */
class Mailer {
    val sent = CopyOnWriteArrayList<String>()

    fun send(text: String) {
        sent += text
    }
}

val mailer = Mailer()

object Doc : StateSchema("doc") {
    val draft = key("draft", default = "")
    val approved = key<String?>("approved", default = null)
}

val review = graph("review", Doc) {
    val write = node("write") { set(Doc.draft, "Dear customer, …") }
    val approve = node("approve") {
        val answer = interrupt("Send this draft? ${get(Doc.draft)}")
        set(Doc.approved, answer)
    }
    val send = node("send") { if (get(Doc.approved) == "yes") mailer.send(get(Doc.draft)) }
    start(write)
    write then approve
    approve then send
}
