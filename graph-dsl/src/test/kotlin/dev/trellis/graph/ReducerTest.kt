package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import io.kotest.property.Arb
import io.kotest.property.arbitrary.int
import io.kotest.property.arbitrary.list
import io.kotest.property.arbitrary.long
import io.kotest.property.arbitrary.map
import io.kotest.property.arbitrary.numericDouble
import io.kotest.property.arbitrary.string
import io.kotest.property.checkAll
import kotlinx.collections.immutable.PersistentMap

class ReducerTest : FunSpec({

    test("replace returns the update") {
        checkAll(Arb.string(), Arb.string()) { current, update ->
            Reducer.replace<String>().reduce(current, update) shouldBe update
        }
        Reducer.replace<String?>().reduce("old", null) shouldBe null
    }

    test("append concatenates current and update") {
        checkAll(Arb.list(Arb.int()), Arb.list(Arb.int())) { current, update ->
            Reducer.append<Int>().reduce(current, update) shouldBe current + update
        }
    }

    test("append is associative") {
        val append = Reducer.append<Int>()
        checkAll(Arb.list(Arb.int(), 0..20), Arb.list(Arb.int(), 0..20), Arb.list(Arb.int(), 0..20)) { a, b, c ->
            append.reduce(append.reduce(a, b), c) shouldBe append.reduce(a, append.reduce(b, c))
        }
    }

    test("append leaves its inputs alone and is not changed by them later") {
        val current = arrayListOf("a", "b")
        val update = arrayListOf("c")
        val result = Reducer.append<String>().reduce(current, update)
        result shouldBe listOf("a", "b", "c")
        current += "mutated later"
        update += "mutated later"
        result shouldBe listOf("a", "b", "c")
        current shouldBe listOf("a", "b", "mutated later")
    }

    test("append copies a caller's list even for an empty update") {
        val current = arrayListOf("a")
        val result = Reducer.append<String>().reduce(current, emptyList())
        current += "mutated later"
        result shouldBe listOf("a")
    }

    test("append results are read-only lists") {
        val result = Reducer.append<String>().reduce(emptyList(), listOf("a"))

        // java.util.List.add, the way a Java caller would try it (a Kotlin MutableList cast would be refused earlier)
        @Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN", "UNCHECKED_CAST")
        val javaList = result as java.util.List<String>
        shouldThrow<UnsupportedOperationException> { javaList.add("b") }
        shouldThrow<IndexOutOfBoundsException> { result[1] }
        result.hashCode() shouldBe listOf("a").hashCode()
        result.toString() shouldBe "[a]"
    }

    test("every value keeps its elements whatever is appended to it or to older values later") {
        // A model of branches: each step appends to a random earlier value; all values must stay as built.
        checkAll(Arb.list(Arb.int(0..1_000), 1..200), Arb.list(Arb.int(0..3), 1..200)) { picks, sizes ->
            val append = Reducer.append<Int>()
            val values = arrayListOf<List<Int>>(emptyList())
            val expected = arrayListOf<List<Int>>(emptyList())
            for ((step, pick) in picks.withIndex()) {
                val from = pick % values.size
                val update = List(sizes[step % sizes.size]) { step * 10 + it }
                values += append.reduce(values[from], update)
                expected += expected[from] + update
            }
            values shouldBe expected
        }
    }

    test("appends from many threads to one value never disturb each other") {
        val append = Reducer.append<Int>()
        val base = (0 until 10).fold(emptyList<Int>()) { acc, i -> append.reduce(acc, listOf(i)) }
        val threads = 8
        val results = arrayOfNulls<List<List<Int>>>(threads)
        val workers = (0 until threads).map { t ->
            Thread {
                var value = base
                val seen = ArrayList<List<Int>>()
                repeat(2_000) { i ->
                    value = append.reduce(value, listOf(t * 100_000 + i))
                    if (i % 100 == 0) seen += value
                }
                results[t] = seen + listOf(value)
            }
        }
        workers.forEach { it.start() }
        workers.forEach { it.join() }
        for (t in 0 until threads) {
            val last = results[t]!!.last()
            last shouldBe (0 until 10).toList() + (0 until 2_000).map { t * 100_000 + it }
            for (snapshot in results[t]!!) snapshot shouldBe last.take(snapshot.size)
        }
        base shouldBe (0 until 10).toList()
    }

    test("appending twice to one value gives two independent results") {
        val append = Reducer.append<String>()
        val base = append.reduce(emptyList(), listOf("x"))
        val left = append.reduce(base, listOf("l1", "l2"))
        val right = append.reduce(base, listOf("r"))
        base shouldBe listOf("x")
        left shouldBe listOf("x", "l1", "l2")
        right shouldBe listOf("x", "r")
        append.reduce(left, emptyList()) shouldBeSameInstanceAs left
    }

    test("append results serialize like a plain list, with their own elements only") {
        val append = Reducer.append<String?>()
        val older = append.reduce(emptyList(), listOf("a", null))
        val newer = append.reduce(older, listOf("b")) // shares the older value's buffer
        for ((value, expected) in listOf(older to listOf("a", null), newer to listOf("a", null, "b"))) {
            val bytes = java.io.ByteArrayOutputStream()
            java.io.ObjectOutputStream(bytes).use { it.writeObject(value) }
            val back = java.io.ObjectInputStream(
                java.io.ByteArrayInputStream(bytes.toByteArray()),
            ).use { it.readObject() }
            back shouldBe expected
            back.hashCode() shouldBe expected.hashCode()
            @Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN", "UNCHECKED_CAST")
            shouldThrow<UnsupportedOperationException> { (back as java.util.List<String?>).add("c") }
        }
    }

    test("merge adds the update's entries, replacing those with the same key") {
        checkAll(
            Arb.map(Arb.string(0..3), Arb.int(), maxSize = 10),
            Arb.map(Arb.string(0..3), Arb.int(), maxSize = 10),
        ) { current, update ->
            Reducer.merge<String, Int>().reduce(current, update) shouldBe current + update
        }
    }

    test("merge returns a persistent map and leaves its inputs alone") {
        val current = hashMapOf("a" to 1, "b" to 2)
        val update = hashMapOf("b" to 20, "c" to 3)
        val result = Reducer.merge<String, Int>().reduce(current, update)
        result.shouldBeInstanceOf<PersistentMap<String, Int>>()
        result shouldBe mapOf("a" to 1, "b" to 20, "c" to 3)
        current shouldBe mapOf("a" to 1, "b" to 2)
        update shouldBe mapOf("b" to 20, "c" to 3)
        Reducer.merge<String, Int>().reduce(current, emptyMap()).shouldBeInstanceOf<PersistentMap<String, Int>>()
    }

    test("sum, sumLong and sumDouble add") {
        checkAll(Arb.int(), Arb.int()) { a, b -> Reducer.sum().reduce(a, b) shouldBe a + b }
        checkAll(Arb.long(), Arb.long()) { a, b -> Reducer.sumLong().reduce(a, b) shouldBe a + b }
        checkAll(Arb.numericDouble(), Arb.numericDouble()) { a, b -> Reducer.sumDouble().reduce(a, b) shouldBe a + b }
    }

    test("folding updates with sum gives their arithmetic sum") {
        checkAll(Arb.list(Arb.int(-1000..1000))) { updates ->
            updates.fold(0, Reducer.sum()::reduce) shouldBe updates.sum()
        }
    }

    test("a custom reducer is a lambda and is kept by its key") {
        val longest = Reducer<String> { current, update -> if (update.length > current.length) update else current }
        val schema = object : StateSchema("custom") {
            val word = key("word", default = "", reducer = longest)
        }
        longest.reduce("abc", "de") shouldBe "abc"
        listOf("a", "abcd", "xy").fold("", longest::reduce) shouldBe "abcd"
        schema.word.reducer shouldBeSameInstanceAs longest
    }

    test("built-in reducers say what they are") {
        Reducer.append<Int>().toString() shouldBe "Reducer.append()"
        Reducer.merge<Int, Int>().toString() shouldBe "Reducer.merge()"
        Reducer.sum().toString() shouldBe "Reducer.sum()"
    }
})
