package dev.trellis.functional

import dev.trellis.testing.ApiDump
import io.kotest.core.spec.style.FunSpec

class ApiDumpTest : FunSpec({
    test("the public API matches api/functional.api") {
        ApiDump.check()
    }
})
