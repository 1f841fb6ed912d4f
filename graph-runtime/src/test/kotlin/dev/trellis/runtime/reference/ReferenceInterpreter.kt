package dev.trellis.runtime.reference

import dev.trellis.runtime.Status
import java.util.PriorityQueue

/**
 * A small sequential interpreter of `docs/semantics.md` §4–7, written from the contract (not from the
 * engine) as a discrete-event simulation in virtual time, with plain collections and no bit tricks.
 *
 * Every wait (an attempt's duration, a retry's delay) is an event at `now + length`; events at the same instant are
 * handled in the order their waits began, as a virtual-time dispatcher resumes coroutines (without retries: in
 * start order). An attempt that fails while retries remain schedules the retry's delay, then the next attempt. After each finish: merge, decide edges (one token per target on the channel
 * source → target), promote (in the order nodes came to hold a trigger). Ready nodes start in the order they became
 * ready, up to the concurrency limit; when nothing runs or is ready, the first declared node holding a trigger
 * falls back.
 *
 * Subgraph and map nodes (§11) are nodes like any other to this loop; what they do inside one attempt is
 * computed when it starts, from their spec alone (a child run or a map starts from the same input whenever it
 * runs): a subgraph node's attempt lasts its child run (this interpreter run recursively on the child spec, its
 * `now` at the end); a map's tasks are given to at most `maxConcurrency` workers in index order, each free worker
 * taking the next task, and the map ends when its last task ends (fail-fast: when its first task fails). Writes are
 * labels appended to the log: `n<i>#<execution>` for a node, `n<i>#<e>[<k>]` for task `k` of a map, a child run's
 * labels prefixed with its node's or task's (`n2#1/n0#1`, `n3#1[2]/n0#1`).
 */
object ReferenceInterpreter {
    class Outcome(
        val status: Status,
        /** `node <i>` or `limit`, for a failed run. */
        val error: String?,
        val statuses: List<Status>,
        val counts: List<Int>,
        /** Attempts per node, retries included. */
        val attempts: List<Int>,
        val sum: Int,
        /** The append-reducer key, sorted (compared as a multiset). */
        val log: List<String>,
        /** The labels of the tasks that failed in maps that collect failures (and in their child runs), sorted. */
        val errors: List<String>,
        /** Virtual time when the run ended. */
        val duration: Long,
        /** Per node, the outcome of its child run when it is a subgraph node, or of its tasks' child runs. */
        val children: List<Outcome?>,
        /** Tokens left when the run ended (dropped when it failed). */
        val tokensLeft: Int,
        /** How many times the fallback made a node ready. */
        val fallbacks: Int,
        /**
         * Whether two waits ended at the same instant. Their order is then the order their waits began, which for a
         * failed run decides what else had started when it failed: a detail of the virtual-time dispatcher rather than of
         * the contract.
         */
        val tied: Boolean,
    ) {
        /** What must not depend on durations when the run completes. */
        val plan: List<Any> get() = listOf(status, statuses, counts, attempts, sum, log, errors)

        override fun toString(): String =
            "Outcome($status, error=$error, statuses=$statuses, counts=$counts, attempts=$attempts, sum=$sum, " +
                "fallbacks=$fallbacks, tied=$tied, duration=$duration, errors=$errors, log=$log)"
    }

    /** What one execution of a map node does: when it ends, the task that failed it, its writes and collected failures. */
    private class MapRun(
        val duration: Long,
        val failed: String?,
        val log: List<String>,
        val sum: Int,
        val errors: List<String>,
        val tied: Boolean,
    )

    /** Task `k` of execution [execution] of map node [node], whose tasks' child runs end as [child]. */
    private fun mapRun(spec: GraphSpec, node: Int, kind: NodeKind.MapOf, execution: Int, child: Outcome?): MapRun {
        val flaky = spec.flaky[node]
        val ends = LongArray(kind.items)
        val failures = arrayOfNulls<String>(kind.items)
        val workers = PriorityQueue<Long>()
        repeat(minOf(kind.maxConcurrency, kind.items)) { workers += 0L }
        for (k in 0 until kind.items) {
            val label = "n$node#$execution[$k]"
            val attempt = child?.duration ?: kind.taskDurations[k].toLong()
            val length = if (child != null && child.status == Status.FAILED) {
                failures[k] = child.error
                attempt
            } else {
                if (execution == kind.taskFailAt[k]) failures[k] = label
                (flaky + 1) * attempt + flaky * GraphSpec.RETRY_DELAY
            }
            val start = workers.poll()
            ends[k] = start + length
            workers += ends[k]
        }
        val failing = (0 until kind.items).filter { failures[it] != null }
        if (!kind.collect && failing.isNotEmpty()) {
            val first = failing.minOf { ends[it] }
            val firsts = failing.filter { ends[it] == first }
            val tied = firsts.size > 1 || (child != null && child.status == Status.FAILED && child.tied)
            return MapRun(first, failures[firsts.first()], emptyList(), 0, emptyList(), tied)
        }
        val log = ArrayList<String>()
        val errors = ArrayList<String>()
        var sum = 0
        for (k in 0 until kind.items) {
            val label = "n$node#$execution[$k]"
            val failure = failures[k]
            if (failure != null) {
                errors += failure
                continue
            }
            if (child != null) {
                log += child.log.map { "$label/$it" }
                errors += child.errors.map { "$label/$it" }
                sum += child.sum
            }
            log += label
            sum += node + 1
        }
        return MapRun(ends.maxOrNull() ?: 0L, null, log, sum, errors, false)
    }

    /** A wait that ends at [at]: attempt [attempt] of [execution] of [node] ends, or (when [retry]) its delay before it. */
    private class Wait(
        val node: Int,
        val execution: Int,
        val attempt: Int,
        val retry: Boolean,
        val at: Long,
        val order: Long,
    )

    /**
     * Runs [spec]. With [coalesce], a channel holds at most one token (a second trigger from the same source falls
     * together with the first): a mutant of the rule whose counts depend on durations, used to show that the
     * property tests can tell. With [perTaskJoin], a map node triggers its successors once per task (none for an
     * empty list) instead of once: another mutant, of §11's join.
     */
    fun run(spec: GraphSpec, coalesce: Boolean = false, perTaskJoin: Boolean = false): Outcome {
        val n = spec.size
        val successors =
            List(n) { m -> spec.edges.filter { it.from == m }.flatMap { it.targets }.filter { it >= 0 }.toSet() }
        val inputs = List(n) { t -> (0 until n).filter { t in successors[it] } }
        val feeders = List(n) { t ->
            inputs[t].associateWith { m ->
                if (m ==
                    t
                ) {
                    emptySet()
                } else {
                    reaching(m, avoiding = t, successors)
                }
            }
        }
        val tokens = List(n) { t -> inputs[t].associateWith { 0 }.toMutableMap() }
        val holding = ArrayList<Int>() // nodes holding a trigger, in the order they came to hold one
        val counts = IntArray(n)
        val attempts = IntArray(n)
        val statuses = Array(n) { Status.PENDING }
        val ready = ArrayDeque<Int>()
        val running = BooleanArray(n)
        var runningCount = 0
        val waits = PriorityQueue<Wait>(compareBy<Wait>({ it.at }, { it.order }))
        var now = 0L
        var order = 0L
        var total = 0
        var error: String? = null
        val log = ArrayList<String>()
        val errors = ArrayList<String>()
        var sum = 0
        var fallbacks = 0
        val children = spec.kinds.map { kind ->
            when (kind) {
                is NodeKind.Sub -> run(kind.child, coalesce, perTaskJoin)
                is NodeKind.MapOf -> kind.child?.let { run(it, coalesce, perTaskJoin) }
                NodeKind.Plain -> null
            }
        }
        val maps = HashMap<Pair<Int, Int>, MapRun>()

        fun mapOf(node: Int, execution: Int): MapRun = maps.getOrPut(node to execution) {
            mapRun(spec, node, spec.kinds[node] as NodeKind.MapOf, execution, children[node])
        }

        /** How long one attempt of [execution] of [node] lasts. */
        fun length(node: Int, execution: Int): Long = when (spec.kinds[node]) {
            NodeKind.Plain -> spec.duration(node, execution).toLong()
            is NodeKind.Sub -> children[node]!!.duration
            is NodeKind.MapOf -> mapOf(node, execution).duration
        }
        var tied = false

        fun holds(t: Int) = tokens[t].values.any { it > 0 }

        fun active(m: Int) = running[m] || m in ready || holds(m)

        fun settled(t: Int, m: Int) = tokens[t].getValue(m) == 0 && feeders[t].getValue(m).none(::active)

        fun take(t: Int) {
            for (m in inputs[t]) if (tokens[t].getValue(m) > 0) tokens[t][m] = tokens[t].getValue(m) - 1
            ready.addLast(t)
            if (!holds(t)) holding.remove(t)
        }

        fun promote() {
            for (t in holding.toList()) {
                if (running[t] || t in ready) continue
                if (inputs[t].all { m -> tokens[t].getValue(m) > 0 || settled(t, m) }) take(t)
            }
        }

        spec.entries.distinct().forEach { ready.addLast(it) }
        while (true) {
            while (error == null && ready.isNotEmpty() && runningCount < spec.maxConcurrency) {
                val t = ready.removeFirst()
                if (total >= spec.maxNodeExecutions) {
                    error = "limit"
                    break
                }
                total++
                counts[t]++
                running[t] = true
                runningCount++
                statuses[t] = Status.EXECUTING
                waits += Wait(t, counts[t], 1, retry = false, at = now + length(t, counts[t]), order = order++)
            }
            if (runningCount == 0) {
                if (error == null && holding.isNotEmpty()) {
                    fallbacks++
                    take(holding.min())
                    continue
                }
                break
            }
            val done = waits.poll()
            if (waits.peek()?.at == done.at) tied = true
            now = done.at
            if (done.retry) {
                waits +=
                    Wait(
                        done.node,
                        done.execution,
                        done.attempt,
                        retry = false,
                        at =
                            now + length(done.node, done.execution),
                        order = order++,
                    )
                continue
            }
            val kind = spec.kinds[done.node]
            val child = children[done.node]
            // A failed child run fails the subgraph node's attempt for good (only Flaky is retried); a map's retries
            // are its tasks'.
            val childFailed = kind is NodeKind.Sub && child!!.status == Status.FAILED
            if (!childFailed && kind !is NodeKind.MapOf && done.attempt <= spec.flaky[done.node]) {
                waits +=
                    Wait(
                        done.node,
                        done.execution,
                        done.attempt + 1,
                        retry = true,
                        at = now + GraphSpec.RETRY_DELAY,
                        order = order++,
                    )
                continue
            }
            running[done.node] = false
            runningCount--
            attempts[done.node] += done.attempt
            val label = "n${done.node}#${done.execution}"
            val failure = when {
                childFailed -> child!!.error.also { if (child.tied) tied = true }
                kind is NodeKind.MapOf -> mapOf(done.node, done.execution).let {
                    if (it.tied) tied = true
                    it.failed
                }
                done.execution == spec.failAt[done.node] -> label
                else -> null
            }
            if (failure != null) {
                statuses[done.node] = Status.FAILED
                if (error == null) error = failure
            } else {
                statuses[done.node] = Status.COMPLETED
                when (kind) {
                    NodeKind.Plain -> {
                        log += label
                        sum += done.node + 1
                    }
                    is NodeKind.Sub -> {
                        log += child!!.log.map { "$label/$it" } + label
                        errors += child.errors.map { "$label/$it" }
                        sum += child.sum + done.node + 1
                    }
                    is NodeKind.MapOf -> mapOf(done.node, done.execution).let {
                        log += it.log
                        errors += it.errors
                        sum += it.sum
                    }
                }
                if (error == null) {
                    val targets = spec.edges.filter { it.from == done.node }.flatMap { it.decide(counts[done.node]) }
                    for (target in targets.filter { it >= 0 }.distinct()) {
                        val before = tokens[target].getValue(done.node)
                        if (!holds(target)) holding += target
                        // The per-task-join mutant triggers a map's successors once per task, not once.
                        val triggers = if (perTaskJoin && kind is NodeKind.MapOf) kind.items else 1
                        tokens[target][done.node] = if (coalesce) 1 else before + triggers
                    }
                }
            }
            if (error == null) promote()
        }
        val left = (0 until n).sumOf { t -> tokens[t].values.sum() }
        check(error != null || left == 0) { "the reference ended a completed run with $left tokens waiting" }
        return Outcome(
            status = if (error == null) Status.COMPLETED else Status.FAILED,
            error = error,
            statuses = statuses.toList(),
            counts = counts.toList(),
            attempts = attempts.toList(),
            sum = sum,
            log = log.sorted(),
            errors = errors.sorted(),
            duration = now,
            children = children,
            tokensLeft = left,
            fallbacks = fallbacks,
            tied = tied,
        )
    }

    /** The nodes that reach [m] without passing through [avoiding], [m] included. */
    private fun reaching(m: Int, avoiding: Int, successors: List<Set<Int>>): Set<Int> {
        val seen = HashSet<Int>()
        val stack = ArrayDeque(listOf(m))
        while (stack.isNotEmpty()) {
            val x = stack.removeLast()
            if (x == avoiding || !seen.add(x)) continue
            for (p in successors.indices) if (x in successors[p]) stack.addLast(p)
        }
        return seen
    }
}
