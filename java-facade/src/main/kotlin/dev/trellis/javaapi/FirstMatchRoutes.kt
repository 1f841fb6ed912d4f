package dev.trellis.javaapi

import dev.trellis.graph.FirstMatchBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.State
import java.util.function.Predicate

/**
 * The routes of a first-match node from Java (`JavaGraph.Builder.firstMatch`, `docs/semantics.md` §13.2): conditions
 * tried in declaration order, the first that holds wins; end with exactly one of [otherwise] or [otherwiseFail].
 *
 * ```java
 * builder.firstMatch("review", routes -> routes
 *     .on("publish", s -> s.get(approved))
 *     .on("write", s -> s.get(drafts) < 3)
 *     .otherwise(Graph.END));
 * ```
 */
public class FirstMatchRoutes internal constructor() {
    private val declarations = ArrayList<FirstMatchBuilder.() -> Unit>()

    /** Takes [target] when [condition] holds on the merged state and no condition declared before it does. */
    public fun on(target: String, condition: Predicate<State>): FirstMatchRoutes = apply {
        declarations += { on(NodeRef.of(target)) { condition.test(it) } }
    }

    /** When no condition holds, takes [target]; `otherwise(Graph.END)` says the path may end there. */
    public fun otherwise(target: String): FirstMatchRoutes = apply {
        declarations += { otherwise(NodeRef.of(target)) }
    }

    /** When no condition holds, fails the node with `NoRouteMatchedException` naming it and its targets. */
    public fun otherwiseFail(): FirstMatchRoutes = apply { declarations += { otherwiseFail() } }

    internal fun applyTo(builder: FirstMatchBuilder) {
        for (declaration in declarations) builder.declaration()
    }
}
