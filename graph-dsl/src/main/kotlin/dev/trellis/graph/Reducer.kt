package dev.trellis.graph

import dev.trellis.graph.internal.AppendList
import kotlinx.collections.immutable.PersistentMap
import kotlinx.collections.immutable.toPersistentMap

/**
 * A reducer folds an update written by a node into the current value of a state key.
 *
 * Keys with a reducer accept writes from any number of nodes, in parallel too: the runtime folds every
 * write in completion order, so no update is lost. Keys without a reducer are last-writer-wins and fail
 * with a conflict when two writers race (see `docs/semantics.md`).
 *
 * ```kotlin
 * val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
 * val total = key("total", default = 0, reducer = Reducer.sum())
 * val longest = key("longest", default = "", reducer = Reducer { current, update -> maxOf(current, update) })
 * ```
 */
public fun interface Reducer<T> {
    /** Returns the new value of the key after [update] is folded into [current]. */
    public fun reduce(current: T, update: T): T

    /** Built-in reducers. */
    public companion object {
        /** Replaces the current value with the update: last writer wins, without the conflict check. */
        @JvmStatic
        public fun <T> replace(): Reducer<T> = ReplaceReducer.cast()

        /**
         * Appends the update's elements to the current list.
         *
         * The result is an immutable list that shares its storage with the value it was appended to: an append costs
         * amortized O(1) in time and a few bytes beyond the new elements, never a copy of the list per step. Every value
         * keeps its own elements, also when two branches append to the same value.
         */
        @JvmStatic
        public fun <E> append(): Reducer<List<E>> = AppendReducer.cast()

        /** Merges the update's entries into the current map; an entry of the update replaces one with its key. */
        @JvmStatic
        public fun <K, V> merge(): Reducer<Map<K, V>> = MergeReducer.cast()

        /** Adds the update to the current integer. */
        @JvmStatic
        public fun sum(): Reducer<Int> = SumInt

        /** Adds the update to the current long. */
        @JvmStatic
        public fun sumLong(): Reducer<Long> = SumLong

        /** Adds the update to the current double. */
        @JvmStatic
        public fun sumDouble(): Reducer<Double> = SumDouble
    }
}

private object ReplaceReducer : Reducer<Any?> {
    override fun reduce(current: Any?, update: Any?): Any? = update

    override fun toString(): String = "Reducer.replace()"

    @Suppress("UNCHECKED_CAST")
    fun <T> cast(): Reducer<T> = this as Reducer<T>
}

private object AppendReducer : Reducer<List<Any?>> {
    override fun reduce(current: List<Any?>, update: List<Any?>): List<Any?> = AppendList.of(current).plus(update)

    override fun toString(): String = "Reducer.append()"

    @Suppress("UNCHECKED_CAST")
    fun <E> cast(): Reducer<List<E>> = this as Reducer<List<E>>
}

private object MergeReducer : Reducer<Map<Any?, Any?>> {
    override fun reduce(current: Map<Any?, Any?>, update: Map<Any?, Any?>): Map<Any?, Any?> {
        val base: PersistentMap<Any?, Any?> = current as? PersistentMap<Any?, Any?> ?: current.toPersistentMap()
        return if (update.isEmpty()) base else base.putAll(update)
    }

    override fun toString(): String = "Reducer.merge()"

    @Suppress("UNCHECKED_CAST")
    fun <K, V> cast(): Reducer<Map<K, V>> = this as Reducer<Map<K, V>>
}

private object SumInt : Reducer<Int> {
    override fun reduce(current: Int, update: Int): Int = current + update

    override fun toString(): String = "Reducer.sum()"
}

private object SumLong : Reducer<Long> {
    override fun reduce(current: Long, update: Long): Long = current + update

    override fun toString(): String = "Reducer.sumLong()"
}

private object SumDouble : Reducer<Double> {
    override fun reduce(current: Double, update: Double): Double = current + update

    override fun toString(): String = "Reducer.sumDouble()"
}
