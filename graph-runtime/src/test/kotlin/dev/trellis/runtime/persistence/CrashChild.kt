package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import java.time.Duration
import java.time.Instant
import kotlin.system.exitProcess

/** The graph of the crash test: a chain, a fan-out of six two-node branches, a join, a small diamond, an end. */
object CrashGraph {
    const val RUN_ID = "crash-run"

    /** A short lease, so that the run of a killed process can be taken over soon. */
    val LEASE: Duration = Duration.ofSeconds(2)

    object Work : StateSchema("crash-work") {
        /** Every completed node's id, sorted: the same whatever order parallel nodes complete in. */
        val visited = key(
            "visited",
            default = emptyList<String>(),
            reducer = Reducer<List<String>> {
                a,
                b,
                ->
                (a + b).sorted()
            },
        )

        /** One per completed execution. */
        val executions = key("executions", default = 0, reducer = Reducer.sum())
    }

    /** The graph's nodes; each one logs `start <id>` and `done <id>` through [log] and waits [stepMillis]. */
    fun build(stepMillis: Long, log: (String) -> Unit): Graph = graph("crash-graph", Work) {
        fun step(id: String): NodeRef = node(id) {
            log("start $id")
            delay(stepMillis)
            set(Work.visited, listOf(id))
            set(Work.executions, 1)
            log("done $id")
        }
        val s1 = step("s1")
        val s2 = step("s2")
        val s3 = step("s3")
        val join = step("join")
        val branches = (1..6).map { i ->
            val f = step("f$i")
            val g = step("g$i")
            s3 then f
            f then g
            g then join
        }
        check(branches.size == 6)
        val k1 = step("k1")
        val k2 = step("k2")
        val j2 = step("j2")
        val end = step("end")
        start(s1)
        s1 then s2
        s2 then s3
        join then k1
        join then k2
        k1 then j2
        k2 then j2
        j2 then end
    }

    val nodeIds: List<String> =
        listOf("s1", "s2", "s3") + (1..6).flatMap { listOf("f$it", "g$it") } + listOf("join", "k1", "k2", "j2", "end")
}

/** Appends lines to a file durably: each line is forced to disk before the node goes on. */
class SideLog(path: Path) : AutoCloseable {
    private val channel = FileChannel.open(
        path,
        StandardOpenOption.CREATE,
        StandardOpenOption.WRITE,
        StandardOpenOption.APPEND,
    )
    private val pid = ProcessHandle.current().pid()

    @Synchronized
    fun log(line: String) {
        channel.write(ByteBuffer.wrap("$line $pid\n".toByteArray()))
        channel.force(false)
    }

    override fun close() = channel.close()

    /** A logged line: what happened ("start", "done"), to which node, in which process. */
    data class Line(val event: String, val node: String, val pid: Long)

    companion object {
        /** The lines logged to [path] so far, by every process; none when nothing was logged yet. */
        fun read(path: Path): List<Line> = if (!Files.exists(path)) {
            emptyList()
        } else {
            Files.readAllLines(path).filter { it.isNotBlank() }.map { line ->
                val (event, node, pid) = line.trim().split(" ")
                Line(event, node, pid.toLong())
            }
        }
    }
}

/**
 * The child process of [CrashResumeTest]: `run <db> <sideLog>` starts the run (and is killed during it);
 * `resume <db> <sideLog> <resultFile>` resumes it and writes the result. With the system property
 * `trellis.crash.async` set, both checkpoint with `Durability.ASYNC` and every append is slowed by
 * [SLOW_APPEND_MILLIS], so that the run gets ahead of its stored checkpoints (`AsyncDurabilityCrashTest`).
 */
object CrashChild {
    const val SLOW_APPEND_MILLIS = 400L

    @JvmStatic
    fun main(args: Array<String>) {
        val (mode, db, side) = args
        val async = System.getProperty("trellis.crash.async") != null
        SideLog(Path.of(side)).use { sideLog ->
            val graph = CrashGraph.build(stepMillis = 150, log = sideLog::log)
            SqliteCheckpointStore(Path.of(db), leaseDuration = CrashGraph.LEASE).use { sqlite ->
                val store: CheckpointStore = if (async) SlowAppends(sqlite) else sqlite
                val options = RunOptions(
                    runId = if (mode ==
                        "run"
                    ) {
                        CrashGraph.RUN_ID
                    } else {
                        null
                    },
                    checkpointing = Checkpointing(
                        store,
                        fullSnapshotEvery = 8,
                        durability = if (async) Checkpointing.Durability.ASYNC else Checkpointing.Durability.SYNC,
                    ),
                )
                val result = runBlocking {
                    when (mode) {
                        "run" -> graph.invoke(options = options)
                        "resume" -> resumeWhenFree(graph, options)
                        else -> error("unknown mode $mode")
                    }
                }
                if (mode == "resume") Files.writeString(Path.of(args[3]), describe(result))
            }
        }
        exitProcess(0)
    }

    /** Resumes the run, waiting for the killed process's lease to expire first (it can no longer release it). */
    private suspend fun resumeWhenFree(graph: Graph, options: RunOptions): RunResult {
        val deadline = Instant.now().plusSeconds(20)
        while (true) {
            try {
                return graph.resume(CrashGraph.RUN_ID, options)
            } catch (e: RunOwnedException) {
                if (Instant.now().isAfter(deadline)) throw e
                println("lease held until ${e.leaseExpiresAt}; waiting")
                delay(maxOf(50, Duration.between(Instant.now(), e.leaseExpiresAt).toMillis() + 50))
            }
        }
    }

    /** [inner] whose appends take [SLOW_APPEND_MILLIS] longer: a store slower than the graph's steps. */
    private class SlowAppends(private val inner: CheckpointStore) : CheckpointStore by inner {
        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            delay(SLOW_APPEND_MILLIS)
            inner.append(lease, record)
        }
    }

    fun describe(result: RunResult): String = buildString {
        appendLine("status ${result.status}")
        for (id in CrashGraph.nodeIds) appendLine("executions $id ${result.node(id).executions}")
        appendLine("visited ${result.state[CrashGraph.Work.visited].joinToString(",")}")
        appendLine("total ${result.state[CrashGraph.Work.executions]}")
    }
}
