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
        val log: List<Int>,
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
        val plan: List<Any> get() = listOf(status, statuses, counts, attempts, sum, log)

        override fun toString(): String =
            "Outcome($status, error=$error, statuses=$statuses, counts=$counts, attempts=$attempts, sum=$sum, fallbacks=$fallbacks, tied=$tied)"
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
     * property tests can tell.
     */
    fun run(spec: GraphSpec, coalesce: Boolean = false): Outcome {
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
        val log = ArrayList<Int>()
        var fallbacks = 0
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
                waits += Wait(t, counts[t], 1, retry = false, at = now + spec.duration(t, counts[t]), order = order++)
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
                            now + spec.duration(done.node, done.execution),
                        order = order++,
                    )
                continue
            }
            if (done.attempt <= spec.flaky[done.node]) {
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
            if (done.execution == spec.failAt[done.node]) {
                statuses[done.node] = Status.FAILED
                if (error == null) error = "node ${done.node}"
            } else {
                statuses[done.node] = Status.COMPLETED
                log += done.node
                if (error == null) {
                    val targets = spec.edges.filter { it.from == done.node }.flatMap { it.decide(counts[done.node]) }
                    for (target in targets.filter { it >= 0 }.distinct()) {
                        val before = tokens[target].getValue(done.node)
                        if (!holds(target)) holding += target
                        tokens[target][done.node] = if (coalesce) 1 else before + 1
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
            sum = log.sumOf { it + 1 },
            log = log.sorted(),
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
