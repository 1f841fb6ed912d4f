package dev.trellis.graph.spec

import dev.trellis.testing.ApiDump
import io.kotest.core.spec.style.FunSpec

class ApiDumpTest : FunSpec({
    test("the public API matches api/graph-spec.api") {
        ApiDump.check()
    }
})
