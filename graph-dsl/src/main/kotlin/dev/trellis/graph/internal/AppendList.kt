package dev.trellis.graph.internal

import dev.trellis.graph.Reducer
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater

/**
 * The immutable list [Reducer.append] returns: the first [size] elements of a buffer that later appends may share.
 *
 * Appending to a list whose size is the number of slots its buffer has handed out so far claims the next slots
 * by compare-and-set and writes the new elements there, in place: no copy, one small object per append. Appending
 * to any other list (an older value, once a newer one was appended to the same buffer; or a full buffer) copies
 * its elements into a new buffer of twice the size. Slots are written once, before the list that covers them is
 * created, and a list never reads beyond its own size, so every value stays what it was when it was made, on
 * every thread that received it through a safe publication (the runtime publishes states through a volatile).
 */
internal class AppendList<E> private constructor(
    private val buffer: Buffer,
    override val size: Int,
) : AbstractList<E>(), RandomAccess, java.io.Serializable {
    /** A shared array and how many of its slots have been handed out. */
    internal class Buffer(
        @JvmField val slots: Array<Any?>,
        claimed: Int,
    ) {
        @Volatile
        @JvmField
        var claimed: Int = claimed
    }

    @Suppress("UNCHECKED_CAST")
    override fun get(index: Int): E {
        if (index < 0 || index >= size) {
            throw IndexOutOfBoundsException("Index $index is out of bounds of a list of size $size.")
        }
        return buffer.slots[index] as E
    }

    /**
     * Java serialization writes a plain unmodifiable list of the elements (the buffer is shared and not this value's
     * alone), so that a serialized value reads back as a list equal to this one, without the buffer's spare slots.
     */
    private fun writeReplace(): Any = java.util.Collections.unmodifiableList(ArrayList(this))

    /** This list followed by [update]'s elements. */
    fun plus(update: List<E>): AppendList<E> {
        val added = update.size
        if (added == 0) return this
        val end = size + added
        val current = buffer
        if (end <= current.slots.size && CLAIMED.compareAndSet(current, size, end)) {
            write(current.slots, size, update)
            return AppendList(current, end)
        }
        val slots = arrayOfNulls<Any?>(maxOf(MIN_CAPACITY, end * 2))
        System.arraycopy(current.slots, 0, slots, 0, size)
        write(slots, size, update)
        return AppendList(Buffer(slots, end), end)
    }

    private fun write(slots: Array<Any?>, from: Int, update: List<E>) {
        if (update is RandomAccess) {
            for (i in update.indices) slots[from + i] = update[i]
        } else {
            var i = from
            for (element in update) slots[i++] = element
        }
    }

    companion object {
        private const val MIN_CAPACITY = 16

        private val CLAIMED: AtomicIntegerFieldUpdater<Buffer> = AtomicIntegerFieldUpdater.newUpdater(
            Buffer::class.java,
            "claimed",
        )

        /** [list] as an [AppendList]: itself when it is one, otherwise a copy (the caller's list may change later). */
        fun <E> of(list: List<E>): AppendList<E> {
            if (list is AppendList<E>) return list
            val slots = arrayOfNulls<Any?>(maxOf(MIN_CAPACITY, list.size * 2))
            var i = 0
            for (element in list) slots[i++] = element
            return AppendList(Buffer(slots, i), i)
        }
    }
}
