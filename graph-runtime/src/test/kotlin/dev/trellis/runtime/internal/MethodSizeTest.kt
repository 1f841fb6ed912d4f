package dev.trellis.runtime.internal

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import java.io.DataInputStream

/**
 * HotSpot does not compile a method of more than 8,000 bytes of bytecode (`-XX:-DontCompileHugeMethods`): it runs
 * interpreted, ten times slower. The scheduler inlines its drive loop into a few functions (the run's loop, a node's
 * coroutine), so a small change to the drive can push one of them over the limit without any test failing — a fan-out
 * once became four times slower that way. This reads their class files and keeps every method under the limit.
 */
class MethodSizeTest : FunSpec({
    test("the functions that inline the drive loop stay small enough for HotSpot to compile") {
        val classes = listOf(
            "dev.trellis.runtime.internal.execution.NodeCoroutineKt",
            "dev.trellis.runtime.internal.execution.WorkersKt",
            "dev.trellis.runtime.internal.scheduling.DriveKt",
            "dev.trellis.runtime.internal.scheduling.Engine",
        )
        val sizes = classes.flatMap { name -> codeSizes(name).map { (method, size) -> "$name.$method" to size } }
        sizes.size shouldBeGreaterThan classes.size
        sizes.filter { it.second > HUGE_METHOD_LIMIT }.shouldBeEmpty()
    }
})

private const val HUGE_METHOD_LIMIT = 8_000

/** The bytecode length of each method of class [name] (read from its class file). */
private fun codeSizes(name: String): List<Pair<String, Int>> {
    val resource = "/" + name.replace('.', '/') + ".class"
    val stream = MethodSizeTest::class.java.getResourceAsStream(resource) ?: error("No class file $resource")
    DataInputStream(stream.buffered()).use { input ->
        input.readInt() // magic
        input.readUnsignedShort() // minor
        input.readUnsignedShort() // major
        val count = input.readUnsignedShort()
        val utf8 = arrayOfNulls<String>(count)
        var i = 1
        while (i < count) {
            when (val tag = input.readUnsignedByte()) {
                1 -> utf8[i] = input.readUTF()
                3, 4, 9, 10, 11, 12, 17, 18 -> input.skipNBytes(4)
                5, 6 -> {
                    input.skipNBytes(8)
                    i++ // a long or double takes two entries
                }
                7, 8, 16, 19, 20 -> input.skipNBytes(2)
                15 -> input.skipNBytes(3)
                else -> error("Unknown constant pool tag $tag in $resource")
            }
            i++
        }
        input.skipNBytes(6) // access, this, super
        input.skipNBytes(2L * input.readUnsignedShort()) // interfaces
        repeat(input.readUnsignedShort()) { // fields
            input.skipNBytes(6)
            repeat(input.readUnsignedShort()) {
                input.skipNBytes(2)
                input.skipNBytes(input.readInt().toLong())
            }
        }
        val sizes = ArrayList<Pair<String, Int>>()
        repeat(input.readUnsignedShort()) { // methods
            input.skipNBytes(2)
            val method = utf8[input.readUnsignedShort()] + utf8[input.readUnsignedShort()]
            repeat(input.readUnsignedShort()) {
                val attribute = utf8[input.readUnsignedShort()]
                val length = input.readInt()
                if (attribute == "Code") {
                    input.skipNBytes(4) // max stack, max locals
                    sizes += method to input.readInt()
                    input.skipNBytes(length - 8L)
                } else {
                    input.skipNBytes(length.toLong())
                }
            }
        }
        return sizes
    }
}
