package dev.trellis.fleet

import dev.trellis.fleet.internal.StateJson
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import java.time.Instant
import java.util.UUID

/**
 * A run to put in the fleet's queue: which graph and version, its input as a JSON object of state key name to value,
 * its id, its [priority] (higher first) and the earliest time it may start ([notBefore], null for now).
 *
 * ```kotlin
 * client.submit(Submission("research", 1, """{"question": "Why is the sky blue?"}""", runId = "q-42"))
 * client.submit(Submission.of(research, 1, stateOf(Research.question to "Why?")))   // typed input
 * ```
 */
public class Submission @JvmOverloads constructor(
    /** The graph's id. */
    public val graphId: String,
    /** The graph's version, as registered by workers ([FleetWorker.register]). */
    public val graphVersion: Int,
    /** The input: a JSON object of state key name to value. */
    public val input: String = "{}",
    /** The run's id, unique in the queue; a random UUID by default. */
    public val runId: String = UUID.randomUUID().toString(),
    /** Higher runs are claimed first; runs of equal priority in submission order. */
    public val priority: Int = 0,
    /** The run is not claimed before this time (by the database's clock); null for at once. */
    public val notBefore: Instant? = null,
) {
    init {
        require(graphId.isNotBlank()) { "The graph id of a submission must not be blank." }
        require(runId.isNotBlank() && runId.length <= MAX_RUN_ID) {
            "A run id must be 1 to $MAX_RUN_ID characters, but was '$runId'."
        }
    }

    override fun toString(): String = "Submission($runId: $graphId@$graphVersion, priority=$priority)"

    /** Submissions built from typed input. */
    public companion object {
        private const val MAX_RUN_ID = 200

        /** A submission of [graph] at [version] with the typed [input], encoded by each key's serializer. */
        @JvmStatic
        @JvmOverloads
        public fun of(
            graph: Graph,
            version: Int,
            input: State,
            runId: String = UUID.randomUUID().toString(),
            priority: Int = 0,
            notBefore: Instant? = null,
        ): Submission {
            require(input.schema === graph.schema) {
                "The input state has schema '${input.schema.name}', but graph '${graph.id}' uses schema " +
                    "'${graph.schema.name}'. Build the input from ${graph.schema.name}'s keys."
            }
            return Submission(graph.id, version, StateJson.encode(input), runId, priority, notBefore)
        }
    }
}
