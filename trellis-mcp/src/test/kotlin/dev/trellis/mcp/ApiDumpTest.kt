package dev.trellis.mcp

import dev.trellis.testing.ApiDump
import org.junit.jupiter.api.Test

class ApiDumpTest {
    @Test
    fun `public API matches the checked-in dump`() {
        ApiDump.check()
    }
}
