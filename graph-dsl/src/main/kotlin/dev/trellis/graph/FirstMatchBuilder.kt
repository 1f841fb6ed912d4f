package dev.trellis.graph

/**
 * The block of `node.firstMatch { }` (`docs/semantics.md` §13.2): conditions tried in declaration order, the first that
 * holds wins; it must say what happens when none holds, with exactly one of [otherwise] or [otherwiseFail].
 *
 * ```kotlin
 * review.firstMatch {
 *     on(publish) { it[Doc.approved] }
 *     on(write) { it[Doc.drafts] < 3 }
 *     otherwise(giveUp) // or otherwise(END), or otherwiseFail()
 * }
 * ```
 */
@TrellisDsl
public class FirstMatchBuilder internal constructor() {
    internal val branches = ArrayList<Edge.FirstMatch.Branch>()
    internal val endings = ArrayList<String?>()

    /** The end of a path: `otherwise(END)` says the path may end here. */
    @Suppress("PropertyName", "ktlint:standard:property-naming")
    public val END: NodeRef get() = NodeRef.END

    /** Takes [target] when [condition] holds on the merged state and no condition declared before it does. */
    public fun on(target: NodeRef, condition: (State) -> Boolean) {
        branches += Edge.FirstMatch.Branch(target.id, condition)
    }

    /** When no condition holds, takes [target]; `otherwise(END)` says the path may end there. */
    public fun otherwise(target: NodeRef) {
        endings += target.id
    }

    /** When no condition holds, fails the execution with `NoRouteMatchedException` naming the node and its targets. */
    public fun otherwiseFail() {
        endings += null
    }

    internal fun problems(from: String): List<String> = buildList {
        if (branches.isEmpty()) {
            add("First-match routing of node '$from' declares no condition; add on(target) { condition } to it.")
        }
        if (endings.isEmpty()) {
            add(
                "First-match routing of node '$from' does not say what happens when no condition holds; end the " +
                    "block with otherwise(target) (a default target), otherwise(END) (the path may end there) or " +
                    "otherwiseFail() (the node fails with NoRouteMatchedException).",
            )
        }
        if (endings.size > 1) {
            add(
                "First-match routing of node '$from' declares ${endings.size} endings " +
                    "(${endings.joinToString { ending(it) }}); keep exactly one.",
            )
        }
    }

    private fun ending(target: String?): String = when (target) {
        null -> "otherwiseFail()"
        Graph.END -> "otherwise(END)"
        else -> "otherwise($target)"
    }
}
