package dev.trellis.graph

/**
 * How a child run's state is built from its parent's and how its final state comes back as the parent node's
 * writes (`docs/semantics.md` §11). Key-to-key mappings ([input], [output]) are the simple case; [output] with a
 * block writes anything. Subclasses add the input block: [SubgraphMapping] for a subgraph node, [TaskMapping] for
 * the tasks of a map node.
 */
@TrellisDsl
public sealed class Mapping(
    /** The schema of the parent graph, whose keys the parent side of the mapping names. */
    public val parentSchema: StateSchema,
    /** The schema of the child graph, whose keys the child side of the mapping names. */
    public val childSchema: StateSchema,
) {
    internal val inputs = ArrayList<Pair<StateKey<*>, StateKey<*>>>()
    internal val outputs = ArrayList<Pair<StateKey<*>, StateKey<*>>>()
    internal var outputBlock: (suspend NodeScope.(child: State) -> Unit)? = null
    internal val problems = ArrayList<String>()

    /** Copies the parent's value of [from] into the child's key [to] when a child run starts. */
    public fun <T> input(from: StateKey<T>, to: StateKey<T>) {
        checkSchema(from, parentSchema, "input", "parent")
        checkSchema(to, childSchema, "input", "child")
        inputs += from to to
    }

    /** Writes the child's final value of [from] to the parent's key [to] (through its reducer, if any). */
    public fun <T> output(from: StateKey<T>, to: StateKey<T>) {
        checkSchema(from, childSchema, "output", "child")
        checkSchema(to, parentSchema, "output", "parent")
        outputs += from to to
    }

    /**
     * Turns the child's final state into writes of the parent node, with the node's [NodeScope]: `set` writes
     * parent keys. Runs after the key-to-key outputs; at most one block per mapping.
     */
    public fun output(block: suspend NodeScope.(child: State) -> Unit) {
        if (outputBlock != null) problems += "declares output { } twice; put all the output code in one block."
        outputBlock = block
    }

    private fun checkSchema(key: StateKey<*>, schema: StateSchema, what: String, side: String) {
        if (key.schema !== schema) {
            problems += "maps $what key '${key.name}' of schema '${key.schema.name}' on the $side side, " +
                "but the $side schema is '${schema.name}'; use a key of '${schema.name}' there."
        }
    }

    /** The parent keys this mapping reads through key-to-key inputs. */
    public val inputKeys: List<StateKey<*>> get() = inputs.map { it.first }

    /** The parent keys this mapping writes through key-to-key outputs. */
    public val outputKeys: List<StateKey<*>> get() = outputs.map { it.second }

    /** The key-to-key inputs as (parent key, child key) pairs, in declaration order; for tools such as the graph spec. */
    @InternalTrellisApi
    public val inputPairs: List<Pair<StateKey<*>, StateKey<*>>> get() = inputs.toList()

    /** The key-to-key outputs as (child key, parent key) pairs, in declaration order; for tools such as the graph spec. */
    @InternalTrellisApi
    public val outputPairs: List<Pair<StateKey<*>, StateKey<*>>> get() = outputs.toList()

    /** The output block, or null; for tools such as the graph spec, which names registered blocks. */
    @InternalTrellisApi
    public val outputBlockOrNull: (suspend NodeScope.(child: State) -> Unit)? get() = outputBlock

    /** The input block (a `ChildInput.() -> Unit`, or `TaskInput<T>.() -> Unit`), or null; for tools. */
    @InternalTrellisApi
    public abstract val inputBlockOrNull: Any?

    /** Whether the mapping has blocks, which may read or write any key (then [inputKeys]/[outputKeys] are not all). */
    public abstract val hasBlocks: Boolean

    internal abstract val hasInputBlock: Boolean

    /**
     * The mapping as the node's slice (`docs/semantics.md` §12): it reads the parent keys of its key-to-key inputs
     * (and [reads]) and writes those of its key-to-key outputs (and [writes]); a half with a block is undeclared.
     */
    internal fun slice(reads: List<StateKey<*>>, writes: List<StateKey<*>>): NodeSlice = NodeSlice(
        if (hasInputBlock) null else (inputKeys + reads).toSet(),
        if (outputBlock != null) null else (outputKeys + writes).toSet(),
    )

    /** The child's input: its initial state with the key-to-key inputs applied, then [block]'s. */
    internal fun childInput(parent: State, block: ChildInput.() -> Unit, scope: ChildInput): State {
        for (i in inputs.indices) scope.setAny(inputs[i].second, parent[inputs[i].first])
        scope.block()
        return scope.build()
    }

    /** Writes the child's [final] state back through the node's [scope]. */
    @InternalTrellisApi
    public suspend fun applyOutput(scope: NodeScope, final: State) {
        for (i in outputs.indices) {
            @Suppress("UNCHECKED_CAST")
            scope.set(outputs[i].second as StateKey<Any?>, final[outputs[i].first])
        }
        outputBlock?.invoke(scope, final)
    }
}

/** The mapping of a subgraph node: [input] may also build the child's input with a block. */
public class SubgraphMapping internal constructor(parentSchema: StateSchema, childSchema: StateSchema) :
    Mapping(parentSchema, childSchema) {
        private var inputBlock: (ChildInput.() -> Unit)? = null

        /** Sets child keys from the parent state (`parent`) when a child run starts: `input { set(C.q, parent[P.q]) }`. */
        public fun input(block: ChildInput.() -> Unit) {
            if (inputBlock != null) problems += "declares input { } twice; put all the input code in one block."
            inputBlock = block
        }

        override val hasBlocks: Boolean get() = inputBlock != null || outputBlock != null

        override val hasInputBlock: Boolean get() = inputBlock != null

        @InternalTrellisApi
        override val inputBlockOrNull: Any? get() = inputBlock

        /** The input of a child run started from [parent]. */
        @InternalTrellisApi
        public fun inputFor(parent: State): State =
            childInput(parent, inputBlock ?: {}, ChildInput(parent, childSchema))
    }

/** The mapping of the tasks of a map node: [input] sees the task's `item` and `index` too. */
public class TaskMapping<T> internal constructor(parentSchema: StateSchema, childSchema: StateSchema) :
    Mapping(parentSchema, childSchema) {
        private var inputBlock: (TaskInput<T>.() -> Unit)? = null

        /** Sets child keys from the task's `item` (and `parent`, `index`): `input { set(Research.question, item) }`. */
        public fun input(block: TaskInput<T>.() -> Unit) {
            if (inputBlock != null) problems += "declares input { } twice; put all the input code in one block."
            inputBlock = block
        }

        override val hasBlocks: Boolean get() = inputBlock != null || outputBlock != null

        override val hasInputBlock: Boolean get() = inputBlock != null

        @InternalTrellisApi
        override val inputBlockOrNull: Any? get() = inputBlock

        /** The input of the child run of task [index] on [item], started from [parent]. */
        @InternalTrellisApi
        public fun inputFor(parent: State, item: Any?, index: Int): State {
            @Suppress("UNCHECKED_CAST")
            val scope = TaskInput(parent, childSchema, item as T, index)
            @Suppress("UNCHECKED_CAST")
            return childInput(parent, (inputBlock ?: {}) as ChildInput.() -> Unit, scope)
        }
    }

/** What an input block sees: the [parent] state, and [set] for the child's keys. */
@TrellisDsl
public open class ChildInput internal constructor(
    /** The parent's state the attempt started from. */
    public val parent: State,
    private val childSchema: StateSchema,
) {
    private val values = State.initialValues(childSchema)

    /** Sets the child's key [key] to [value] in the child run's input. */
    public fun <V> set(key: StateKey<V>, value: V) {
        setAny(key, value)
    }

    internal fun setAny(key: StateKey<*>, value: Any?) {
        require(key.schema === childSchema) {
            "The input mapping sets key '${key.name}' of schema '${key.schema.name}', but the child's schema is " +
                "'${childSchema.name}'; set a key of '${childSchema.name}'."
        }
        values[key.index] = key.cast(value)
    }

    internal fun build(): State = State.fromArrays(childSchema, values, LongArray(values.size))
}

/** What a map task's input block sees: its [item] and [index] besides the [parent] state. */
public class TaskInput<T> internal constructor(
    parent: State,
    childSchema: StateSchema,
    /** The task's item. */
    public val item: T,
    /** The task's index in the map's list, from 0. */
    public val index: Int,
) : ChildInput(parent, childSchema)
