package dev.trellis.checkpoint

/**
 * Which runs [CheckpointStore.runs] lists and how many: the runs whose latest checkpoint has [status] (any when
 * null) and whose graph is [graphId] (any when null), in [order] — by run id (the default), or newest first —
 * starting after run [after] (from the start when null), at most [limit] of them.
 *
 * Paging is by key: pass the last run id of a page as [after] to get the next page, so a page costs the same
 * however deep it is and runs added meanwhile are neither skipped nor repeated (with [Order.NEWEST_FIRST], runs
 * created after the first page was read are not on the later pages: they are newer than all of it).
 *
 * ```kotlin
 * var page = store.runs(RunQuery(status = "INTERRUPTED", limit = 50))
 * while (page.isNotEmpty()) {
 *     page.forEach(::show)
 *     page = store.runs(RunQuery(status = "INTERRUPTED", after = page.last().runId, limit = 50))
 * }
 * ```
 */
public class RunQuery @JvmOverloads constructor(
    /** The status of the runs' latest checkpoint (`RUNNING`, `COMPLETED`, `FAILED`, `INTERRUPTED`…), or null for any. */
    public val status: String? = null,
    /** The graph of the runs' latest checkpoint, or null for any. */
    public val graphId: String? = null,
    /** The run id the page starts after (exclusive), or null for the first page. */
    public val after: String? = null,
    /** The most runs to list, from 1 to 10,000. */
    public val limit: Int = 100,
    /** The order of the listing. */
    public val order: Order = Order.RUN_ID,
) {
    /** The orders a listing can be in. */
    public enum class Order {
        /** By run id, ascending. */
        RUN_ID,

        /**
         * Newest first: by [RunInfo.createdAt] descending, then run id descending (runs of the same instant, and runs
         * whose creation time is unknown, which come last). With [after], the run named must still be in the store:
         * a page never starts after a deleted run (the listing refuses it, and the caller starts again).
         */
        NEWEST_FIRST,
    }

    init {
        require(limit in 1..MAX_LIMIT) { "A run query's limit is $limit; pass a limit from 1 to $MAX_LIMIT." }
    }

    /** Whether [run] passes the query's filters (its [after] and [limit] aside). */
    public fun matches(run: RunInfo): Boolean =
        (status == null || run.latestStatus == status) && (graphId == null || run.graphId == graphId)

    override fun equals(other: Any?): Boolean =
        other is RunQuery && status == other.status && graphId == other.graphId && after == other.after &&
            limit == other.limit && order == other.order

    override fun hashCode(): Int {
        var result = status?.hashCode() ?: 0
        result = 31 * result + (graphId?.hashCode() ?: 0)
        result = 31 * result + (after?.hashCode() ?: 0)
        result = 31 * result + limit
        result = 31 * result + order.hashCode()
        return result
    }

    override fun toString(): String =
        "RunQuery(status=$status, graphId=$graphId, after=$after, limit=$limit, order=$order)"

    private companion object {
        const val MAX_LIMIT = 10_000
    }
}
