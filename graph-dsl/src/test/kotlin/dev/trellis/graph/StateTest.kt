package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain

private object Shop : StateSchema() {
    val customer = key<String>("customer")
    val items = key("items", default = emptyList<String>(), reducer = Reducer.append())
    val total = key("total", default = 0)
    val coupon = key<String?>("coupon", default = null)
    val note = key<String?>("note")
}

private object Other : StateSchema("other") {
    val customer = key<String>("customer")
}

class StateTest : FunSpec({

    test("a schema is named after its class unless given a name") {
        Shop.name shouldBe "Shop"
        Other.name shouldBe "other"
        Shop.keys.map { it.name } shouldBe listOf("customer", "items", "total", "coupon", "note")
        Shop.keyOrNull("total") shouldBe Shop.total
        Shop.keyOrNull("missing") shouldBe null
    }

    test("keys read their defaults") {
        val state = Shop.initialState()
        state[Shop.items] shouldBe emptyList()
        state[Shop.total] shouldBe 0
        state[Shop.coupon] shouldBe null
        state.contains(Shop.total) shouldBe true
        state.contains(Shop.coupon) shouldBe true
    }

    test("reading an unset required key names the key and the schema") {
        val state = Shop.initialState()
        val e = shouldThrow<NoSuchElementException> { state[Shop.customer] }
        e.message shouldContain "State key 'customer' of schema 'Shop' has no value and no default"
        e.message shouldContain "declare it with a default"
        state.contains(Shop.customer) shouldBe false
        state.getOrNull(Shop.customer) shouldBe null
        shouldThrow<IllegalArgumentException> { Shop.customer.default }.message shouldContain
            "State key 'customer' of schema 'Shop' has no default value"
    }

    test("with returns a new state and leaves the old one unchanged") {
        val before = Shop.initialState()
        val after = before.with(Shop.total, 5).with(Shop.customer, "ada")
        after[Shop.total] shouldBe 5
        after.getOrNull(Shop.customer) shouldBe "ada"
        before[Shop.total] shouldBe 0
        before.contains(Shop.customer) shouldBe false
        after shouldNotBe before
        after shouldBe Shop.initialState().with(Shop.customer, "ada").with(Shop.total, 5)
    }

    test("with checks the value's type even through an unchecked cast") {
        @Suppress("UNCHECKED_CAST")
        val untyped = Shop.total as StateKey<Any?>
        shouldThrow<IllegalArgumentException> { Shop.initialState().with(untyped, "five") }.message shouldContain
            "State key 'total' of schema 'Shop' holds values of type kotlin.Int, but was given java.lang.String"
    }

    test("stateOf builds a state from typed pairs and keeps other defaults") {
        val state = stateOf(Shop.customer to "ada", Shop.items to listOf("tea"))
        state[Shop.customer] shouldBe "ada"
        state[Shop.items] shouldBe listOf("tea")
        state[Shop.total] shouldBe 0
        state.schema shouldBe Shop
        state.toMap() shouldBe mapOf("customer" to "ada", "items" to listOf("tea"), "total" to 0, "coupon" to null)
    }

    test("stateOf rejects a value of the wrong type, naming key and types") {
        val e = shouldThrow<IllegalArgumentException> { stateOf(Shop.total to "12") }
        e.message shouldContain "State key 'total' of schema 'Shop'"
        e.message shouldContain "type kotlin.Int, but was given java.lang.String"
        shouldThrow<IllegalArgumentException> { stateOf(Shop.customer to null) }.message shouldContain
            "holds values of type kotlin.String, but was given null"
    }

    test("stateOf needs at least one pair") {
        shouldThrow<IllegalArgumentException> { stateOf() }.message shouldContain "use schema.initialState()"
    }

    test("keys of another schema are rejected") {
        shouldThrow<IllegalArgumentException> {
            stateOf(
                Shop.customer to "ada",
                Other.customer to "bob",
            )
        }.message shouldContain
            "State key 'customer' belongs to schema 'other', not to this state's schema 'Shop'"
        val state = Shop.initialState()
        shouldThrow<IllegalArgumentException> { state[Other.customer] }
        shouldThrow<IllegalArgumentException> { state.getOrNull(Other.customer) }
        shouldThrow<IllegalArgumentException> { state.contains(Other.customer) }
        shouldThrow<IllegalArgumentException> { state.versionOf(Other.customer) }
    }

    test("schema.stateOf reads values by name") {
        val state = Shop.stateOf(mapOf("customer" to "ada", "total" to 3, "note" to null))
        state[Shop.customer] shouldBe "ada"
        state[Shop.total] shouldBe 3
        state.contains(Shop.note) shouldBe true
        state[Shop.note] shouldBe null
    }

    test("schema.stateOf names an unknown key and lists the known ones") {
        shouldThrow<IllegalArgumentException> { Shop.stateOf(mapOf("custmer" to "ada")) }.message shouldBe
            "Unknown state key 'custmer' for schema 'Shop'. Known keys: customer, items, total, coupon, note."
    }

    test("schema.stateOf rejects a value of the wrong type") {
        shouldThrow<IllegalArgumentException> { Shop.stateOf(mapOf("items" to "tea")) }.message shouldContain
            "State key 'items' of schema 'Shop' holds values of type kotlin.collections.ArrayList, but was given java.lang.String"
    }

    test("keys are equal by schema and name") {
        val again = object : StateSchema("Shop") {
            val customer = key<String>("customer")
        }
        Shop.keyOrNull("customer") shouldBe Shop.customer
        Shop.customer.hashCode() shouldBe Shop.keyOrNull("customer").hashCode()
        Shop.customer shouldNotBe Other.customer
        Shop.customer shouldNotBe again.customer
        Shop.customer shouldNotBe Shop.note
    }

    test("nullable keys accept null, required ones do not") {
        Shop.coupon.nullable shouldBe true
        Shop.coupon.typeName shouldBe "kotlin.String?"
        Shop.customer.nullable shouldBe false
        Shop.note.hasDefault shouldBe false
        Shop.coupon.accepts(null) shouldBe true
        Shop.customer.accepts(null) shouldBe false
        val state = stateOf(Shop.coupon to "SAVE10").with(Shop.coupon, null)
        state[Shop.coupon] shouldBe null
        state.getOrNull(Shop.note) shouldBe null
        state.contains(Shop.note) shouldBe false
        state.with(Shop.note, null).contains(Shop.note) shouldBe true
    }

    test("every key's version is 0 outside a run") {
        val state = stateOf(Shop.customer to "ada").with(Shop.total, 1)
        Shop.keys.forEach { state.versionOf(it) shouldBe 0L }
    }

    test("a default of the wrong type fails when the key is declared") {
        val e = shouldThrow<IllegalArgumentException> {
            object : StateSchema("bad") {
                @Suppress("unused", "UNCHECKED_CAST")
                val n =
                    key(
                        "n",
                        Shop.total.serializer as kotlinx.serialization.KSerializer<Any?>,
                        Int::class.java,
                        false,
                        "one",
                    )
            }
        }
        e.message shouldContain
            "The default of state key 'n' in schema 'bad' must be a kotlin.Int, but was java.lang.String"
    }

    test("a schema is frozen once a graph is built with it") {
        val schema = object : StateSchema("frozen") {
            @Suppress("unused")
            val first = key("first", default = 0)
        }
        graph("g", schema) { start(node("a") { }) }
        val e = shouldThrow<IllegalStateException> { schema.key("late", default = 1) }
        e.message shouldBe
            "State schema 'frozen' is already used by a built graph; declare key 'late' before building any graph with it."
        schema.keys.map { it.name } shouldBe listOf("first")
    }

    test("versions stay exact when they outgrow an int, and shrink back to the compact copy when they fit") {
        @OptIn(InternalTrellisApi::class)
        run {
            val start = Shop.initialState().with(Shop.customer, "ada")
            // Compact: a merge-style copy with versions that fit.
            val small = start.copyVersions(highest = 7)
            State.setVersion(small, Shop.total.index, 7)
            val s1 = State.fromVersions(Shop, start.copyValues(), small)
            s1.versionOf(Shop.total) shouldBe 7L
            s1.versionOf(Shop.items) shouldBe 0L
            // Beyond Int.MAX_VALUE the copy is wide, and every version (old and new) reads back exactly.
            val big = Int.MAX_VALUE.toLong() + 5
            val wide = s1.copyVersions(highest = big)
            State.setVersion(wide, Shop.customer.index, big)
            val s2 = State.fromVersions(Shop, s1.copyValues(), wide)
            s2.versionOf(Shop.customer) shouldBe big
            s2.versionOf(Shop.total) shouldBe 7L
            s2.copyVersions()[Shop.customer.index] shouldBe big
            // A restored state (long versions) that fit: the next copy is compact again, with the same versions.
            val restored = State.fromArrays(Shop, s1.copyValues(), LongArray(Shop.keys.size) { 3L * it })
            val back = restored.copyVersions(highest = 100)
            (back is IntArray) shouldBe true
            State.fromVersions(Shop, restored.copyValues(), back).copyVersions().toList() shouldBe
                restored.copyVersions().toList()
        }
    }
})
