package dev.trellis.a2a

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.a2a.A2A
import io.a2a.client.Client
import io.a2a.client.ClientEvent
import io.a2a.client.TaskEvent
import io.a2a.client.TaskUpdateEvent
import io.a2a.client.config.ClientConfig
import io.a2a.client.transport.jsonrpc.JSONRPCTransport
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig
import io.a2a.spec.A2AClientException
import io.a2a.spec.AgentCard
import io.a2a.spec.Task
import io.a2a.spec.TaskIdParams
import io.a2a.spec.TaskQueryParams
import io.a2a.spec.TaskState
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.runInterruptible
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.util.function.BiConsumer

object Echo : StateSchema("echo") {
    val question = key<String>("question")
    val answer = key("answer", "")
}

object Desk : StateSchema("desk") {
    val topic = key<String>("topic")
    val text = key("text", "")
    val notes = key("notes", "")
}

/** A remote-agent node against an A2A server exposing a graph, both in this JVM, on loopback (an ephemeral port). */
class A2aTest {
    private val servers = ArrayList<AutoCloseable>()

    @AfterEach
    fun close() = servers.reversed().forEach { it.close() }

    private fun serve(graph: Graph): A2aServer =
        A2aServer.builder(graph, Echo.question, Echo.answer).name(graph.id).description("test agent").start()
            .also { servers += it }

    private fun connect(server: A2aServer): RemoteAgent = RemoteAgent.connect(server.url).also { servers += it }

    private fun caller(remote: RemoteAgent) = graph("caller", Desk) {
        start(remoteAgentNode("ask", remote, Desk.text, artifacts = mapOf("answer" to Desk.notes)) { it[Desk.topic] })
    }

    private val echo = graph("echo", Echo) {
        val answer = node("answer") { set(Echo.answer, "echo: ${get(Echo.question)}") }
        start(answer)
    }

    @Test
    fun `the card describes the graph, and a task runs it and comes back as artifacts and events`(): Unit =
        runBlocking {
            val server = serve(echo)
            val remote = connect(server)
            remote.card.name() shouldBe "echo"
            remote.card.url() shouldBe server.url
            remote.card.capabilities().streaming() shouldBe true

            val events = caller(remote).events(stateOf(Desk.topic to "bees")).toList()
            val result = (events.last() as RunEvent.RunCompleted).result
            result.state[Desk.text] shouldBe "echo: bees"
            result.state[Desk.notes] shouldBe "echo: bees"
            val updates = events.filterIsInstance<RunEvent.Custom>().map { it.path to it.payload }
            updates.map { it.first }.toSet() shouldBe setOf("ask")
            val payloads = updates.map { it.second }
            val states = payloads.filterIsInstance<A2aEvent.Status>().map { it.state }
            states.first() shouldBe "submitted"
            states.last() shouldBe "completed"
            states shouldContain "working"
            payloads.filterIsInstance<A2aEvent.Status>().map { it.text } shouldContain "answer completed"
            payloads.filterIsInstance<A2aEvent.Artifact>().map { it.name to it.text } shouldBe
                listOf("answer" to "echo: bees")
        }

    @Test
    fun `the docs' A2A round trip runs`(): Unit = runBlocking {
        // docs/agents.md, A2A (Kotlin)
        val server = A2aServer.builder(echo, Echo.question, Echo.answer).name("echo").start()
        RemoteAgent.connect(server.url).use { remote ->
            val caller = graph("caller", Desk) {
                start(remoteAgentNode("ask", remote, Desk.text) { "Say hello to ${it[Desk.topic]}" })
            }
            println(caller.invoke(stateOf(Desk.topic to "Ann")).state[Desk.text])
        }
        server.close()
    }

    @Test
    fun `an interrupt of the remote graph asks for input, and the answer resumes both runs`(): Unit = runBlocking {
        val publish = graph("publish", Echo) {
            val confirm = node("confirm") {
                val ok = interrupt("Publish '${get(Echo.question)}'? (yes/no)")
                set(Echo.answer, if (ok == "yes") "published ${get(Echo.question)}" else "kept ${get(Echo.question)}")
            }
            start(confirm)
        }
        val remote = connect(serve(publish))
        val options = RunOptions(runId = "desk-1", checkpointing = Checkpointing(InMemoryCheckpointStore()))
        val caller = caller(remote)
        val paused = caller.invoke(stateOf(Desk.topic to "bees"), options)
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().path shouldBe "ask"
        paused.interrupts.single().payload shouldBe "Publish 'bees'? (yes/no)"

        val done = caller.resume("desk-1", options, "yes")
        done.status shouldBe Status.COMPLETED
        done.state[Desk.text] shouldBe "published bees"
    }

    @Test
    fun `a remote failure fails the attempt with the remote error`(): Unit = runBlocking {
        val broken = graph("broken", Echo) {
            start(node("work") { error("the index is missing") })
        }
        val remote = connect(serve(broken))
        val error = shouldThrow<GraphRunException> { caller(remote).invoke(stateOf(Desk.topic to "bees")) }
        val remoteError =
            generateSequence<Throwable>(error) { it.cause }.filterIsInstance<RemoteAgentException>().first()
        remoteError.state shouldBe "failed"
        remoteError.agent shouldBe "broken"
        remoteError.message shouldContain "the index is missing"
    }

    /** A graph whose one node runs until cancelled: [started] when it runs, [stopped] when it was cancelled. */
    private class Slow {
        val started = CompletableDeferred<Unit>()
        val stopped = CompletableDeferred<Unit>()
        val graph = graph("slow", Echo) {
            start(
                node("work") {
                    started.complete(Unit)
                    try {
                        awaitCancellation()
                    } finally {
                        stopped.complete(Unit)
                    }
                },
            )
        }
    }

    // The served run starts (and the caller is cancelled) before the task's first update reached the caller, mostly:
    // the remote task is then cancelled as soon as that update names it (RemoteTask).
    @Test
    fun `cancelling the run cancels the remote task and its run`(): Unit = runBlocking {
        val slow = Slow()
        val started = slow.started
        val stopped = slow.stopped
        val remote = connect(serve(slow.graph))
        val running = async { caller(remote).invoke(stateOf(Desk.topic to "bees")) }
        withTimeout(60_000) { started.await() }
        running.cancelAndJoin()
        withTimeout(60_000) { stopped.await() } // the server's run was cancelled through the remote task
    }

    /** An SDK client, as another framework would call the served graph with. */
    private fun sdkClient(server: A2aServer): Client =
        Client.builder(A2A.getAgentCard(server.url))
            .withTransport(JSONRPCTransport::class.java, JSONRPCTransportConfig())
            .clientConfig(ClientConfig.Builder().setStreaming(true).build())
            .build()
            .also { client -> servers += AutoCloseable { client.close() } }

    /**
     * Sends [text] as a new task through [client] and returns the task's id, from its first update; [onUpdate] sees
     * the task as each update leaves it.
     */
    private suspend fun send(client: Client, text: String, onUpdate: (Task) -> Unit = {}): String {
        val taskId = CompletableDeferred<String>()
        val consumer = BiConsumer<ClientEvent, AgentCard> { event, _ ->
            val task = when (event) {
                is TaskEvent -> event.task
                is TaskUpdateEvent -> event.task
                else -> null
            }
            if (task != null) {
                taskId.complete(task.id)
                onUpdate(task)
            }
        }
        val message = userMessage(text, "context-$text", null)
        client.sendMessage(message, listOf(consumer), { taskId.completeExceptionally(it) }, null)
        return withTimeout(60_000) { taskId.await() }
    }

    @Test
    fun `tasks-cancel of a served task cancels its run and answers canceled`(): Unit = runBlocking {
        val slow = Slow()
        val client = sdkClient(serve(slow.graph))
        val taskId = send(client, "bees")
        withTimeout(60_000) { slow.started.await() }
        val task = runInterruptible(Dispatchers.IO) { client.cancelTask(TaskIdParams(taskId)) }
        task.status.state() shouldBe TaskState.CANCELED
        withTimeout(60_000) { slow.stopped.await() }
        // A canceled task stays canceled: cancelling it again is refused.
        shouldThrow<A2AClientException> { client.cancelTask(TaskIdParams(taskId)) }
    }

    @Test
    fun `a task cancelled while it asks for input is canceled, and its run is left as it was`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val publish = graph("publish", Echo) {
            start(node("confirm") { set(Echo.answer, "answered ${interrupt("Publish?")}") })
        }
        val server = A2aServer.builder(publish, Echo.question, Echo.answer).store(store).start().also { servers += it }
        val client = sdkClient(server)
        val asking = CompletableDeferred<Task>()
        val taskId = send(client, "bees") { if (it.status.state() == TaskState.INPUT_REQUIRED) asking.complete(it) }
        withTimeout(60_000) { asking.await() }
        val task = runInterruptible(Dispatchers.IO) { client.cancelTask(TaskIdParams(taskId)) }
        task.status.state() shouldBe TaskState.CANCELED
        client.getTask(TaskQueryParams(taskId)).status.state() shouldBe TaskState.CANCELED
        shouldThrow<A2AClientException> { client.cancelTask(TaskIdParams(taskId)) }
        publish.checkpoints(store, taskId).last().status shouldBe "INTERRUPTED"
    }
}
