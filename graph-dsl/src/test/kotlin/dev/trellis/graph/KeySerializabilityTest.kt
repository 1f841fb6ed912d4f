package dev.trellis.graph

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.serialization.PolymorphicSerializer
import kotlinx.serialization.Serializable

interface Animal

@Serializable
abstract class Shape

@Serializable
sealed interface Payment

@Serializable
data class Card(val number: String) : Payment

@Serializable
data class Cash(val amount: Int) : Payment

@Serializable
data class Tree(val name: String, val children: List<Tree> = emptyList())

@Serializable
data class Cage(val label: String, val shapes: List<Shape>)

/** `StateSchema` promises that a key whose values cannot be checkpointed fails when it is declared. */
class KeySerializabilityTest : FunSpec({
    test("a key of an interface type fails at declaration, naming the key, its type and what to do") {
        val e = shouldThrow<IllegalArgumentException> {
            object : StateSchema("zoo") {
                @Suppress("unused")
                val pet = key<Animal?>("pet", default = null)
            }
        }
        e.message shouldContain "State key 'pet' of schema 'zoo'"
        e.message shouldContain "dev.trellis.graph.Animal"
        e.message shouldContain "interface or abstract class"
        e.message shouldContain "sealed"
    }

    test("a key of an abstract serializable class fails at declaration") {
        val e = shouldThrow<IllegalArgumentException> {
            object : StateSchema("drawing") {
                @Suppress("unused")
                val shape = key<Shape>("shape")
            }
        }
        e.message shouldContain "State key 'shape' of schema 'drawing'"
        e.message shouldContain "Shape"
    }

    test("an abstract type anywhere inside the key's type fails too") {
        shouldThrow<IllegalArgumentException> {
            object : StateSchema("zoo-list") {
                @Suppress("unused")
                val pets = key("pets", default = emptyList<Animal>())
            }
        }.message shouldContain "State key 'pets' of schema 'zoo-list'"
        shouldThrow<IllegalArgumentException> {
            object : StateSchema("cages") {
                @Suppress("unused")
                val cage = key<Cage>("cage")
            }
        }.message shouldContain "Shape"
    }

    test("an explicit serializer of open polymorphism fails too") {
        shouldThrow<IllegalArgumentException> {
            object : StateSchema("explicit") {
                @Suppress("unused")
                val pet = key("pet", PolymorphicSerializer(Animal::class), Animal::class.java)
            }
        }.message shouldContain "State key 'pet' of schema 'explicit'"
    }

    test("sealed, recursive and plain types are accepted") {
        val schema = object : StateSchema("fine") {
            @Suppress("unused")
            val payment = key<Payment?>("payment", default = null)

            @Suppress("unused")
            val tree = key("tree", default = Tree("root"))

            @Suppress("unused")
            val counts = key("counts", default = mapOf("a" to listOf(1, 2)))
        }
        schema.keys.map { it.name } shouldBe listOf("payment", "tree", "counts")
    }
})
