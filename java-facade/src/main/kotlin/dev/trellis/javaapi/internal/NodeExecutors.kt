package dev.trellis.javaapi.internal

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import java.util.concurrent.Executor
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

/** The default executor of blocking nodes: virtual threads when the JDK has them (21+), else a cached pool. */
internal object NodeExecutors {
    val default: Executor by lazy { virtualThreads() ?: cachedPool() }

    val defaultDispatcher: CoroutineDispatcher by lazy { default.asCoroutineDispatcher() }

    /** Whether [default] runs nodes on virtual threads. */
    val usesVirtualThreads: Boolean by lazy { default !is java.util.concurrent.ThreadPoolExecutor }

    // Looked up reflectively: Trellis is compiled for Java 17, which has no virtual threads.
    private fun virtualThreads(): Executor? = try {
        Executors::class.java.getMethod("newVirtualThreadPerTaskExecutor").invoke(null) as Executor
    } catch (e: ReflectiveOperationException) {
        null
    }

    private fun cachedPool(): Executor {
        val count = AtomicInteger()
        return Executors.newCachedThreadPool { task ->
            Thread(task, "trellis-node-${count.incrementAndGet()}").apply { isDaemon = true }
        }
    }
}
