package dev.trellis.test

import dev.trellis.runtime.Status
import dev.trellis.test.context.StoreKind
import dev.trellis.test.kotest.TrellisKotestExtension
import dev.trellis.test.kotest.trellis
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldEndWith

class TrellisKotestExtensionTest : FunSpec({
    val extension = TrellisKotestExtension(StoreKind.SQLITE)
    extension(extension)
    var previous: String? = null

    test("each test gets a context with a fresh store") {
        val context = trellis()
        context shouldBe extension.context
        context.storeLocation shouldEndWith "checkpoints.db"
        context.execute(loopGraph).status shouldBe Status.COMPLETED
        context.trajectory().assertNodeCount("draft", 3)
        previous = context.storeLocation
    }

    test("the next test's store is another") {
        trellis().storeLocation shouldNotBe previous
        trellis().runs.size shouldBe 0
    }
})
