package dev.trellis.a2a

import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test

/** An exchange that ends before its remote task cancels the task once, whether the agent named it before or after. */
class RemoteTaskTest {
    private val cancelledLater = ArrayList<String>()
    private val task = RemoteTask { cancelledLater += it }

    @Test
    fun `a task named before the exchange ends is cancelled by the exchange, once`() {
        task.named("t1", ended = false)
        task.abandon() shouldBe "t1"
        task.abandon() shouldBe null
        task.named("t1", ended = false)
        cancelledLater.shouldBeEmpty()
    }

    @Test
    fun `a task named after the exchange ended is cancelled as soon as it is named, once`() {
        task.abandon() shouldBe null
        cancelledLater.shouldBeEmpty()
        task.named("t1", ended = false)
        cancelledLater shouldBe listOf("t1")
        task.named("t1", ended = false)
        cancelledLater shouldBe listOf("t1")
    }

    @Test
    fun `a task the agent ended is not cancelled`() {
        task.named("t1", ended = false)
        task.ended()
        task.abandon() shouldBe null

        val late = RemoteTask { cancelledLater += it }
        late.abandon() shouldBe null
        late.named("t2", ended = true) // its first update that arrives is already its last
        cancelledLater.shouldBeEmpty()
    }

    @Test
    fun `the first name counts`() {
        task.named("t1", ended = false)
        task.named("t2", ended = false)
        task.abandon() shouldBe "t1"
    }
}
