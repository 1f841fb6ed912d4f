package dev.trellis.runtime.internal

import dev.trellis.runtime.internal.execution.NodeJob
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.cancellation.CancellationException
import kotlin.time.Duration.Companion.seconds

/**
 * The job a worker gives an execution it starts in a plain context ([NodeJob]): what it must do like the child
 * coroutine it replaces — attached to nothing until something needs a real job, then a child of the loop's scope in
 * the same state. Each test fails if the lazy job stops standing for the coroutine in one respect.
 */
class NodeJobTest {
    private val scopeJob = Job()
    private val base: CoroutineContext = Dispatchers.Default + CoroutineName("run")

    @Test
    fun `a body that needs nothing of its job leaves no trace in the scope`() {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        job.isActive shouldBe true
        job.isCompleted shouldBe false
        scopeJob.children.toList().shouldBeEmpty()
        job.finish(null)
        job.isActive shouldBe false
        job.isCompleted shouldBe true
        job.isCancelled shouldBe false
        scopeJob.children.toList().shouldBeEmpty()
    }

    @Test
    fun `it is active only while the scope is, as a child coroutine would be`() {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        scopeJob.cancel()
        job.isActive shouldBe false
        job.isCancelled shouldBe true
        // ensureActive asks for the cause: the real job, made now, is cancelled with the scope.
        shouldThrow<CancellationException> { job.ensureActiveLikeABody() }
    }

    @Test
    fun `a cancellation before the real job is carried over to it`(): Unit = runBlocking {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        job.cancel(CancellationException("fail-fast"))
        job.isActive shouldBe false
        job.isCancelled shouldBe true
        scopeJob.isActive shouldBe true // the node's cancellation is not its scope's
        val cause = CompletableDeferred<Throwable?>()
        job.invokeOnCompletion { cause.complete(it) } // needs the real job
        // Cancelled, and still the scope's child until the body ends, like a cancelled coroutine.
        val real = scopeJob.children.single()
        real.isCancelled shouldBe true
        real.isCompleted shouldBe false
        cause.isCompleted shouldBe false
        job.finish(null)
        withTimeout(20.seconds) { cause.await() }!!.message shouldBe "fail-fast"
        scopeJob.children.toList().shouldBeEmpty()
    }

    @Test
    fun `a child coroutine makes the real job, which completes after it`(): Unit = runBlocking {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        val release = CompletableDeferred<Unit>()
        val child = CoroutineScope(job.context).launch { release.await() }
        val real = scopeJob.children.single()
        real.children.toList() shouldContainExactly listOf(child)
        job.finish(null) // the body ended; its child has not
        job.isCompleted shouldBe false
        real.isCompleted shouldBe false
        release.complete(Unit)
        withTimeout(20.seconds) { real.join() }
        job.isCompleted shouldBe true
        scopeJob.children.toList().shouldBeEmpty()
    }

    @Test
    fun `cancelling the job cancels what the body launched`(): Unit = runBlocking {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        val child = CoroutineScope(job.context).launch { CompletableDeferred<Unit>().await() }
        job.cancel(null)
        withTimeout(20.seconds) { child.join() }
        child.isCancelled shouldBe true
        job.finish(CancellationException("ended cancelled"))
        withTimeout(20.seconds) { scopeJob.children.forEach { it.join() } }
        scopeJob.isActive shouldBe true
    }

    @Test
    fun `a failure other than a cancellation fails the scope, as a failed child would`() {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        val failure = IllegalStateException("internal error")
        job.finish(failure)
        scopeJob.isCancelled shouldBe true
        scopeJob.getCancellationExceptionCause() shouldBeSameInstanceAs failure
    }

    @Test
    fun `a cancellation as the body's end is not a failure of the scope`() {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        job.finish(CancellationException("cancelled"))
        job.isCancelled shouldBe true
        job.isCompleted shouldBe true
        scopeJob.isActive shouldBe true
        scopeJob.children.toList().shouldBeEmpty()
    }

    @Test
    fun `its context holds the scope's elements and the job, and composes like any context`() {
        val job = NodeJob(base, base + scopeJob, scopeJob)
        val context = job.context
        context[Job] shouldBeSameInstanceAs job
        context[ContinuationInterceptor] shouldBeSameInstanceAs Dispatchers.Default
        context[CoroutineName]!!.name shouldBe "run"
        context.fold(0) { count, _ -> count + 1 } shouldBe 3
        context.minusKey(Job)[Job] shouldBe null
        context.minusKey(Job)[CoroutineName]!!.name shouldBe "run"
        val renamed = context + CoroutineName("node")
        renamed[CoroutineName]!!.name shouldBe "node"
        renamed[Job] shouldBeSameInstanceAs job
        val unnamed = context.minusKey(CoroutineName)
        unnamed[CoroutineName] shouldBe null
        unnamed[Job] shouldBeSameInstanceAs job
        unnamed[ContinuationInterceptor] shouldBeSameInstanceAs Dispatchers.Default
        (context + Dispatchers.IO)[ContinuationInterceptor] shouldBeSameInstanceAs Dispatchers.IO
    }

    private fun NodeJob.ensureActiveLikeABody() {
        if (!isActive) throw getCancellationException()
    }

    @OptIn(kotlinx.coroutines.InternalCoroutinesApi::class)
    private fun Job.getCancellationExceptionCause(): Throwable? = getCancellationException().cause
}
