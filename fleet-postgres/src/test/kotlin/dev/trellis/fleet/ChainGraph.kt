package dev.trellis.fleet

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import java.io.IOException
import java.util.concurrent.ConcurrentHashMap
import javax.sql.DataSource
import kotlin.time.Duration.Companion.milliseconds

/**
 * The fleet test's graph: ten nodes in a chain. Node `n5` of every tenth run asks for an answer; node `n7` of every
 * seventh run fails its first attempt in each process and is retried. Every node records its side effect in the
 * ledger table — fenced by its claim ([FleetRunContext.checkHeld]) — and writes the claim it ran under to its key.
 */
object ChainGraph {
    const val NODES = 10
    const val INTERRUPT_EVERY = 10
    const val FAIL_EVERY = 7

    object Chain : StateSchema("fleet-chain") {
        val index = key("idx", default = 0)
        val approval = key("approval", default = "")
        val claims: List<StateKey<Int>> = (1..NODES).map { key("a$it", default = 0) }
    }

    fun ledgerDdl(schema: String): String =
        "CREATE TABLE $schema.ledger (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_id TEXT NOT NULL, " +
            "node TEXT NOT NULL, attempt INTEGER NOT NULL, worker TEXT NOT NULL)"

    fun build(dataSource: DataSource, schema: String, stepMillis: Long): Graph = graph("chain", Chain) {
        val failures = ConcurrentHashMap<String, Int>()

        fun step(i: Int): NodeRef = node("n$i", retry = if (i == 7) Retry.fixed(3, 10.milliseconds) else null) {
            val claim = checkNotNull(FleetRunContext.current()) { "not run by a fleet worker" }
            val index = get(Chain.index)
            if (i == 5 && index % INTERRUPT_EVERY == 0) set(Chain.approval, interrupt("approve run $index?"))
            if (i == 7 && index % FAIL_EVERY == 0) {
                if (failures.merge(claim.runId, 1, Int::plus) == 1) throw IOException("flaky n7 of ${claim.runId}")
            }
            delay(stepMillis)
            withContext(Dispatchers.IO) {
                dataSource.connection.use { c ->
                    c.autoCommit = false
                    claim.checkHeld(c)
                    c.prepareStatement(
                        "INSERT INTO $schema.ledger (run_id, node, attempt, worker) VALUES (?, ?, ?, ?)",
                    ).use {
                        it.setString(1, claim.runId)
                        it.setString(2, "n$i")
                        it.setInt(3, claim.attempt)
                        it.setString(4, claim.workerId)
                        it.executeUpdate()
                    }
                    c.commit()
                }
            }
            set(Chain.claims[i - 1], claim.attempt)
        }
        val nodes = (1..NODES).map(::step)
        start(nodes.first())
        nodes.zipWithNext().forEach { (a, b) -> a then b }
    }
}
