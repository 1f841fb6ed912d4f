package dev.trellis.javaapi

import dev.trellis.graph.ChildInput
import dev.trellis.graph.Mapping
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.SubgraphMapping
import dev.trellis.graph.TaskInput
import dev.trellis.graph.TaskMapping
import dev.trellis.javaapi.internal.outputBody
import java.util.function.BiConsumer
import java.util.function.Consumer

/**
 * How a child run of a subgraph node (or of a map task whose target is a graph) gets its input from the parent's
 * state, and how its final state comes back as the node's writes (`docs/semantics.md` §11). [I] is what an input
 * block sees: a `ChildInput` (the `parent` state) for a subgraph node, a `TaskInput<T>` (also the task's `item` and
 * `index`) for a map's tasks. Declarations are checked when the graph is built.
 *
 * ```java
 * builder.subgraph("research", researchGraph, m -> m
 *     .input(plan.topic, research.question)                    // parent key -> child key
 *     .output(research.answer, plan.findings));                // child key -> parent key
 * builder.map("research", plan.questions, researchGraph, m -> m
 *     .input(in -> in.set(research.question, in.getItem()))
 *     .output((ctx, child) -> ctx.set(plan.findings, List.of(child.get(research.answer)))));
 * ```
 */
public class ChildMapping<I : ChildInput> internal constructor() {
    private val declarations = ArrayList<(Mapping, (Consumer<I>) -> Unit) -> Unit>()

    /** Copies the parent's value of [from] into the child's key [to] when a child run starts. */
    public fun <T> input(from: StateKey<T>, to: StateKey<T>): ChildMapping<I> = declare { mapping, _ ->
        mapping.input(from, to)
    }

    /**
     * Sets child keys when a child run starts, after the key-to-key inputs: `in -> in.set(child.q,
     * in.getParent().get(parent.q))`. At most one input block per mapping. It runs on the run's own thread and must
     * not block.
     */
    public fun input(block: Consumer<I>): ChildMapping<I> = declare { _, inputBlock -> inputBlock(block) }

    /** Writes the child's final value of [from] to the parent's key [to] (through its reducer, if any). */
    public fun <T> output(from: StateKey<T>, to: StateKey<T>): ChildMapping<I> = declare { mapping, _ ->
        mapping.output(from, to)
    }

    /**
     * Turns the child's final state into writes of the node, after the key-to-key outputs: [block] gets the node's
     * [JavaNodeScope] (`ctx.set` writes parent keys) and the child's final state. At most one output block per
     * mapping. It runs on the run's own thread and must not block.
     */
    public fun output(block: BiConsumer<JavaNodeScope, State>): ChildMapping<I> = declare { mapping, _ ->
        mapping.output(outputBody(block))
    }

    private fun declare(declaration: (Mapping, (Consumer<I>) -> Unit) -> Unit): ChildMapping<I> = apply {
        declarations += declaration
    }

    /** Applies the declarations to the Kotlin mapping of a subgraph node. */
    internal fun applyTo(mapping: SubgraphMapping) {
        for (declaration in declarations) {
            declaration(mapping) { block ->
                @Suppress("UNCHECKED_CAST") // I is ChildInput for a subgraph node's mapping
                val input = block as Consumer<ChildInput>
                mapping.input { input.accept(this) }
            }
        }
    }

    /** Applies the declarations to the Kotlin mapping of a map node's tasks. */
    internal fun <T> applyTo(mapping: TaskMapping<T>) {
        for (declaration in declarations) {
            declaration(mapping) { block ->
                @Suppress("UNCHECKED_CAST") // I is TaskInput<T> for a map's tasks
                val input = block as Consumer<TaskInput<T>>
                mapping.input { input.accept(this) }
            }
        }
    }

    override fun toString(): String = "ChildMapping(${declarations.size} declarations)"
}
