package dev.trellis.springboot

import dev.trellis.graph.Graph
import dev.trellis.graph.stateOf
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.test.context.runner.ApplicationContextRunner

/** The starter from Kotlin, as docs/spring.md shows it. */
class StarterKotlinTest {
    @Test
    fun `a graph bean runs from a coroutine by its id`() {
        ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TrellisAutoConfiguration::class.java))
            .withBean("greeting", Graph::class.java, { Greeter().graph })
            .run { context ->
                val runners = context.getBean(TrellisRunners::class.java)
                runBlocking {
                    val result = runners.invoke("greeting", stateOf(Greeting.person to "Ada"))
                    result.state[Greeting.text] shouldBe "Hello, Ada!"
                }
            }
    }
}
