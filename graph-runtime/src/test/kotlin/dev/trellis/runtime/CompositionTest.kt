package dev.trellis.runtime

import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskError
import dev.trellis.graph.TaskFailure
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.hours
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Subgraph and map nodes, in memory (`docs/semantics.md` §11). */
@OptIn(ExperimentalCoroutinesApi::class)
class CompositionTest {
    object Plan : StateSchema("composition-plan") {
        val topic = key("topic", default = "")
        val questions = key("questions", default = emptyList<String>())
        val findings = key("findings", default = emptyList<String>(), reducer = Reducer.append())
        val summary = key("summary", default = "")
        val errors = key("errors", default = emptyList<TaskError>())
        val rounds = key("rounds", default = 0)
        val joined = key("joined", default = 0, reducer = Reducer.sum())
    }

    object Research : StateSchema("composition-research") {
        val question = key("question", default = "")
        val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
        val answer = key("answer", default = "")
    }

    private val runs = ConcurrentHashMap<String, AtomicInteger>()

    private fun count(what: String) = runs.computeIfAbsent(what) { AtomicInteger() }.incrementAndGet()

    private fun runsOf(what: String) = runs[what]?.get() ?: 0

    /** web and docs in parallel, then summarize: the child graph of most tests. */
    private val research = graph("research", Research) {
        val web = node("web") {
            count("web")
            set(Research.notes, listOf("web:" + get(Research.question)))
        }
        val docs = node("docs") {
            count("docs")
            set(Research.notes, listOf("docs:" + get(Research.question)))
        }
        val summarize = node("summarize") {
            count("summarize")
            set(Research.answer, get(Research.notes).sorted().joinToString("+"))
        }
        start(web, docs)
        web then summarize
        docs then summarize
    }

    @Test
    fun `a subgraph node maps its input, runs the child run and writes its output`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            val research = subgraph("research", research) {
                input(Plan.topic, Research.question)
                output { child -> set(Plan.findings, listOf(child[Research.answer])) }
            }
            val write = node("write") { set(Plan.summary, get(Plan.findings).joinToString()) }
            start(research)
            research then write
        }
        val run = parent.record(stateOf(Plan.topic to "tides"))
        run.result.state[Plan.summary] shouldBe "docs:tides+web:tides"
        val paths = run.all<RunEvent.NodeStarted>().map { it.path }
        paths.first() shouldBe "research"
        paths.last() shouldBe "write"
        paths.toSet() shouldBe setOf("research", "research/web", "research/docs", "research/summarize", "write")
        run.all<RunEvent.NodeStarted>().single { it.path == "research/web" }.nodeId shouldBe "web"
        run.all<RunEvent.EdgeTaken>().map { it.from to it.to }.toSet() shouldBe setOf(
            "research/web" to "research/summarize",
            "research/docs" to "research/summarize",
            "research" to "write",
        )
        run.result.child("research").state[Research.answer] shouldBe "docs:tides+web:tides"
        run.result.child("research").node("summarize").executions shouldBe 1
        run.result.node("research").executions shouldBe 1
    }

    @Test
    fun `child(path) finds a child run of a child run, which keys its own children by their paths in the run`(): Unit =
        runBlocking {
            val middle = graph("middle", Plan) {
                val inner = subgraph("inner", research) { input(Plan.topic, Research.question) }
                val fan = map("fan", over = Plan.questions, graph = research) { input { set(Research.question, item) } }
                start(inner, fan)
            }
            val outer = graph("outer", Plan) {
                start(
                    subgraph("outer", middle) {
                        input(Plan.topic, Plan.topic)
                        input(Plan.questions, Plan.questions)
                    },
                )
            }
            val result = outer.record(stateOf(Plan.topic to "tides", Plan.questions to listOf("a", "b"))).result
            result.child("outer").children.keys shouldBe setOf("outer/inner", "outer/fan[0]", "outer/fan[1]")
            result.child("outer/inner").state[Research.answer] shouldBe "docs:tides+web:tides"
            result.child("outer/fan[1]").state[Research.answer] shouldBe "docs:b+web:b"
            result.child("outer/inner") shouldBeSameInstanceAs result.child("outer").children["outer/inner"]
        }

    @Test
    fun `key-to-key output folds through the parent key's reducer`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            val research = subgraph("research", research) {
                input { set(Research.question, parent[Plan.topic].uppercase()) }
                output(Research.answer, Plan.summary)
            }
            start(research)
        }
        parent.invoke(stateOf(Plan.topic to "moon")).state[Plan.summary] shouldBe "docs:MOON+web:MOON"
    }

    @Test
    fun `a failing child run fails the subgraph node with the child's own error, and retry runs the whole child again`(): Unit =
        runBlocking {
            val boom = IllegalStateException("flaky")
            val child = graph("flaky-child", Research) {
                val a = node("a") { count("a") }
                val b = node("b") { if (count("b") < 3) throw boom }
                start(a)
                a then b
            }
            val retried = graph("parent", Plan) {
                start(subgraph("research", child, retry = Retry.fixed(3, 1.milliseconds)))
            }
            retried.invoke().status shouldBe Status.COMPLETED
            runsOf("a") shouldBe 3
            runsOf("b") shouldBe 3

            runs.clear()
            val once = graph("parent", Plan) { start(subgraph("research", child)) }
            val failed = shouldThrow<GraphRunException> { once.invoke() }
            failed.cause shouldBeSameInstanceAs boom
            failed.result.node("research").status shouldBe Status.FAILED
        }

    @Test
    fun `a subgraph attempt that outlives its timeout cancels the child run`() = runTest {
        val child = graph("slow-child", Research) {
            start(
                node("slow") {
                    try {
                        awaitCancellation()
                    } finally {
                        count("cancelled")
                    }
                },
            )
        }
        val parent = graph("parent", Plan) { start(subgraph("research", child, timeout = 5.seconds)) }
        val run = parent.record()
        run.result.status shouldBe Status.FAILED
        run.result.error.shouldBeInstanceOf<NodeTimeoutException>()
        runsOf("cancelled") shouldBe 1
        run.all<RunEvent.NodeCancelled>().map { it.path } shouldContainExactly listOf("research/slow")
    }

    @Test
    fun `map tasks fold their writes in task order, not completion order, and the join runs once`() = runTest {
        val parent = graph("parent", Plan) {
            val plan = node("plan") { set(Plan.questions, listOf("a", "b", "c", "d", "e")) }
            val ask = map("ask", over = Plan.questions) { q ->
                // The later the task, the sooner it finishes.
                delay(("e".first() - q.first() + 1).seconds)
                set(Plan.findings, listOf(q))
            }
            val join = node("join") { set(Plan.joined, 1) }
            start(plan)
            plan then ask
            ask then join
        }
        val run = parent.record()
        run.result.state[Plan.findings] shouldContainExactly listOf("a", "b", "c", "d", "e")
        run.result.state[Plan.joined] shouldBe 1
        val ends = run.all<RunEvent.NodeCompleted>().filter { it.task >= 0 }
        ends.map { it.task } shouldContainExactly listOf(4, 3, 2, 1, 0)
        ends.map { it.path } shouldContainExactly listOf("ask[4]", "ask[3]", "ask[2]", "ask[1]", "ask[0]")
        run.all<RunEvent.NodeStarted>().filter { it.path == "ask" }.single().task shouldBe -1
    }

    @Test
    fun `maxConcurrency bounds the running tasks and 1 still runs every task`() = runTest {
        for (limit in listOf(1, 3, Int.MAX_VALUE)) {
            val running = AtomicInteger()
            var peak = 0
            val parent = graph("parent", Plan) {
                start(
                    map("ask", over = Plan.questions, maxConcurrency = limit) { q ->
                        peak = maxOf(peak, running.incrementAndGet())
                        delay(1.seconds)
                        running.decrementAndGet()
                        set(Plan.findings, listOf(q))
                    },
                )
            }
            val items = (0 until 7).map { "q$it" }
            val started = currentTime
            val run = parent.record(stateOf(Plan.questions to items))
            run.result.state[Plan.findings] shouldContainExactly items
            peak shouldBe minOf(limit, 7)
            // As many at once as allowed, at once: 7 one-second tasks take ceil(7 / limit) seconds.
            (currentTime - started) shouldBe (7 + minOf(limit, 7) - 1) / minOf(limit, 7) * 1000L
            run.all<RunEvent.NodeStarted>().filter { it.task >= 0 }.map { it.task } shouldContainExactly
                (0 until 7).toList()
        }
    }

    @Test
    fun `map tasks run on the node dispatcher even when the map itself runs inline on the caller's thread`(): Unit =
        runBlocking {
            val caller = Thread.currentThread()
            val threads = ConcurrentHashMap.newKeySet<Thread>()
            val parent = graph("parent", Plan) {
                start(
                    map("ask", over = Plan.questions) { q ->
                        threads += Thread.currentThread()
                        set(Plan.findings, listOf(q))
                    },
                )
            }
            parent.invoke(stateOf(Plan.questions to listOf("a", "b", "c"))).state[Plan.findings] shouldContainExactly
                listOf("a", "b", "c")
            threads.contains(caller) shouldBe false
        }

    @Test
    fun `an empty list runs no task and the map completes at once`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            val ask = map("ask", over = Plan.questions) { q -> set(Plan.findings, listOf(q)) }
            val join = node("join") { set(Plan.joined, 1) }
            start(ask)
            ask then join
        }
        val run = parent.record()
        run.result.state[Plan.joined] shouldBe 1
        run.all<RunEvent.NodeStarted>().map { it.path } shouldContainExactly listOf("ask", "join")
    }

    @Test
    fun `a subgraph node in a loop starts each child run afresh, and the last child result counts its own run`(): Unit =
        runBlocking {
            val parent = graph("parent", Plan) {
                val research = subgraph("research", research) {
                    input(Plan.topic, Research.question)
                    output { child -> set(Plan.findings, listOf(child[Research.answer])) }
                }
                val next = node("next") {
                    update(Plan.rounds) { it + 1 }
                    set(Plan.topic, "t${get(Plan.rounds)}")
                }
                start(research)
                research then next
                next.route(research, END) { if (it[Plan.rounds] < 3) research else END }
            }
            val first = parent.record(stateOf(Plan.topic to "t0"))
            first.result.state[Plan.findings] shouldContainExactly
                listOf("docs:t0+web:t0", "docs:t1+web:t1", "docs:t2+web:t2")
            first.result.node("research").executions shouldBe 3
            // Each child run (the last one's result here) ran its three nodes once, whatever ran before it.
            val child = first.result.child("research")
            child.nodes.values.map { it.executions } shouldContainExactly listOf(1, 1, 1)
            child.executions.map { it.nodeId }.toSet() shouldBe setOf("web", "docs", "summarize")
            child.executions.size shouldBe 3
            // A second run of the same graph gives the same answers (nothing carried over from the first's children).
            parent.record(stateOf(Plan.topic to "t0")).result.state[Plan.findings] shouldContainExactly
                first.result.state[Plan.findings]
        }

    /**
     * Child runs of one graph reuse their scheduler positions: through the graph's shared spare when they may run side
     * by side (parallel subgraph nodes, map tasks), through the parent's plan when each runs alone. Mixed, and run
     * again and again, every child run still starts afresh and reports only its own executions.
     */
    @Test
    fun `child runs of one graph side by side, alone and as map tasks each start afresh, run after run`(): Unit =
        runBlocking {
            val parent = graph("mixed-children", Plan) {
                fun child(id: String) = subgraph(id, research) {
                    input(Plan.topic, Research.question)
                    output { child -> set(Plan.findings, listOf("$id=" + child[Research.answer])) }
                }
                val left = child("left")
                val right = child("right")
                val after = child("after")
                val each = map("each", over = Plan.questions, graph = research) {
                    input { set(Research.question, item) }
                    output { child -> set(Plan.joined, child[Research.notes].size / 2) }
                }
                start(left, right)
                left then after
                right then after
                after then each
            }
            repeat(3) { round ->
                val result = parent.invoke(stateOf(Plan.topic to "r$round", Plan.questions to listOf("q1", "q2")))
                result.state[Plan.findings].sorted() shouldContainExactly listOf(
                    "after=docs:r$round+web:r$round",
                    "left=docs:r$round+web:r$round",
                    "right=docs:r$round+web:r$round",
                )
                result.state[Plan.joined] shouldBe 2
                for (path in listOf("left", "right", "after", "each[0]", "each[1]")) {
                    result.child(path).nodes.values.map { it.executions } shouldContainExactly listOf(1, 1, 1)
                }
            }
        }

    @Test
    fun `a map inside a loop runs its tasks on every execution`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            val plan = node("plan") {
                update(Plan.rounds) { it + 1 }
                set(Plan.questions, listOf("r${get(Plan.rounds)}a", "r${get(Plan.rounds)}b"))
            }
            val ask = map("ask", over = Plan.questions) { q -> set(Plan.findings, listOf(q)) }
            start(plan)
            plan then ask
            ask.route(plan, END) { if (it[Plan.rounds] < 3) plan else END }
        }
        val run = parent.record()
        run.result.state[Plan.findings] shouldContainExactly listOf("r1a", "r1b", "r2a", "r2b", "r3a", "r3b")
        run.all<RunEvent.NodeStarted>().filter { it.task == 1 }.map { it.execution } shouldContainExactly
            listOf(1, 2, 3)
    }

    @Test
    fun `fail-fast cancels the running tasks and fails the map with the task's own error`() = runTest {
        val boom = IllegalArgumentException("bad item")
        val parent = graph("parent", Plan) {
            start(
                map("ask", over = Plan.questions) { q ->
                    if (q == "bad") {
                        delay(1.seconds)
                        throw boom
                    }
                    delay(1.hours)
                    set(Plan.findings, listOf(q))
                },
            )
        }
        val run = parent.record(stateOf(Plan.questions to listOf("a", "bad", "c")))
        run.result.status shouldBe Status.FAILED
        run.result.error shouldBeSameInstanceAs boom
        run.all<RunEvent.NodeFailed>().map { it.path } shouldContainExactly listOf("ask[1]", "ask")
        run.all<RunEvent.NodeCancelled>().map { it.path }.sorted() shouldContainExactly listOf("ask[0]", "ask[2]")
        run.result.state[Plan.findings] shouldBe emptyList()
    }

    @Test
    fun `collect keeps the writes of the tasks that completed and writes the failures in task order`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            start(
                map("ask", over = Plan.questions, onTaskFailure = TaskFailure.COLLECT, errors = Plan.errors) { q ->
                    if (q.startsWith("bad")) throw IllegalStateException("no answer for $q")
                    set(Plan.findings, listOf(q))
                },
            )
        }
        val run = parent.record(stateOf(Plan.questions to listOf("a", "bad1", "c", "bad2")))
        run.result.status shouldBe Status.COMPLETED
        run.result.state[Plan.findings] shouldContainExactly listOf("a", "c")
        run.result.state[Plan.errors] shouldContainExactly listOf(
            TaskError(1, "java.lang.IllegalStateException", "no answer for bad1"),
            TaskError(3, "java.lang.IllegalStateException", "no answer for bad2"),
        )
    }

    @Test
    fun `two tasks writing a key without a reducer conflict, naming both tasks`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            start(map("ask", over = Plan.questions) { q -> set(Plan.summary, q) })
        }
        val failed = shouldThrow<GraphRunException> { parent.invoke(stateOf(Plan.questions to listOf("a", "b"))) }
        val conflict = failed.cause.shouldBeInstanceOf<ConflictingUpdateException>()
        conflict.message shouldContain "summary"
        conflict.message shouldContain "ask[1]"
        conflict.message shouldContain "ask[0]"
    }

    @Test
    fun `task retries follow the map node's retry policy, per task`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            start(
                map("ask", over = Plan.questions, retry = Retry.fixed(3, 1.milliseconds)) { q ->
                    if (q == "flaky" && count("flaky") < 3) error("try again")
                    set(Plan.findings, listOf(q))
                },
            )
        }
        val run = parent.record(stateOf(Plan.questions to listOf("a", "flaky")))
        run.result.state[Plan.findings] shouldContainExactly listOf("a", "flaky")
        run.all<RunEvent.NodeRetrying>().map { it.path } shouldContainExactly listOf("ask[1]", "ask[1]")
        run.all<RunEvent.NodeCompleted>().single { it.path == "ask[1]" }.attempts shouldBe 3
    }

    @Test
    fun `a map whose tasks are subgraphs runs a child run per item`(): Unit = runBlocking {
        val parent = graph("parent", Plan) {
            val ask = map("research", over = Plan.questions, graph = research, maxConcurrency = 2) {
                input { set(Research.question, "$index:$item") }
                output(Research.answer, Plan.summary)
                output { child -> set(Plan.findings, listOf(child[Research.answer])) }
            }
            start(ask)
        }
        val failed = shouldThrow<GraphRunException> { parent.invoke(stateOf(Plan.questions to listOf("x", "y"))) }
        failed.cause.shouldBeInstanceOf<ConflictingUpdateException>() // both tasks write summary

        val ok = graph("parent", Plan) {
            start(
                map("research", over = Plan.questions, graph = research, maxConcurrency = 2) {
                    input { set(Research.question, "$index:$item") }
                    output { child -> set(Plan.findings, listOf(child[Research.answer])) }
                },
            )
        }
        val run = ok.record(stateOf(Plan.questions to listOf("x", "y", "z")))
        run.result.state[Plan.findings] shouldContainExactly listOf(
            "docs:0:x+web:0:x",
            "docs:1:y+web:1:y",
            "docs:2:z+web:2:z",
        )
        run.all<RunEvent.NodeStarted>().map { it.path }.filter { it.endsWith("/web") }.sorted() shouldContainExactly
            listOf("research[0]/web", "research[1]/web", "research[2]/web")
        run.result.child("research[2]").state[Research.question] shouldBe "2:z"
    }

    @Test
    fun `a key-to-key mapping is the node's slice, which validate() checks`() {
        val parent = graph("parent", Plan) {
            val s = node("s") { }
            val a = subgraph("a", research) {
                input(Plan.topic, Research.question)
                output(Research.answer, Plan.summary)
            }
            val b = subgraph("b", research) {
                input(Plan.topic, Research.question)
                output(Research.answer, Plan.summary)
            }
            val m =
                map(
                    "m",
                    over = Plan.questions,
                    graph = research,
                    onTaskFailure = TaskFailure.COLLECT,
                    errors = Plan.errors,
                ) {
                    input { set(Research.question, item) }
                    output(Research.answer, Plan.summary)
                }
            start(s)
            s.then(a) { true }
            s.then(b) { true }
            a then m
        }
        parent.node("a").slice!!.reads shouldBe setOf(Plan.topic)
        parent.node("a").slice!!.writes shouldBe setOf(Plan.summary)
        parent.node("m").slice!!.reads shouldBe null // an input block may read anything
        parent.node("m").slice!!.writes shouldBe setOf(Plan.summary, Plan.errors)
        parent.validate().parallelWrites.map { Triple(it.key, it.first, it.second) } shouldContainExactly
            listOf(Triple(Plan.summary, "a", "b"), Triple(Plan.summary, "b", "m"))
    }

    @Test
    fun `the builder names bad composite declarations`() {
        val other = object : StateSchema("composition-other") {
            val list = key("list", default = emptyList<String>())
        }
        val error = shouldThrow<GraphValidationException> {
            graph("bad", Plan) {
                val a = map("a/b", over = other.list, maxConcurrency = 0) { }
                val s = subgraph("s", research) { input(Research.question, Research.question) }
                start(a, s)
            }
        }
        error.message shouldContain "Node id 'a/b' contains '/'"
        error.message shouldContain "maxConcurrency 0"
        error.message shouldContain "maps over key 'list' of schema 'composition-other'"
        error.message shouldContain "maps input key 'question' of schema 'composition-research' on the parent side"
    }
}
