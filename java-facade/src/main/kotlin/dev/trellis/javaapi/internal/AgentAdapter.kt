package dev.trellis.javaapi.internal

import dev.trellis.javaapi.AsyncAgent
import dev.trellis.javaapi.AsyncAgentScope
import dev.trellis.runtime.agent.Agent
import dev.trellis.runtime.agent.AgentInput
import dev.trellis.runtime.agent.AgentScope
import dev.trellis.runtime.agent.AgentSnapshot
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.future.await
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.Future

/**
 * An agent written in Java ([AsyncAgent]) as the runtime's [Agent]. Adapters of one agent are equal (and hash
 * alike), so the agent node's per-instance serialization treats them as the one agent they stand for.
 */
internal class AgentAdapter(val agent: AsyncAgent) : Agent {
    override val name: String get() = agent.name

    override suspend fun call(input: AgentInput, scope: AgentScope): String {
        val stream = ScopeAdapter(Emitter(currentCoroutineContext()) { item -> item.sendTo(scope) })
        val outcome = try {
            stream.actionThread = Thread.currentThread()
            // Declared non-null, but a Java agent can still return null.
            val stage: CompletionStage<String>? = try {
                agent.call(input, stream)
            } finally {
                stream.actionThread = null
            }
            stage
                ?: throw NullPointerException(
                    "${agent.javaClass.name}.call returned null; return a CompletionStage of the reply.",
                )
            val settled = try {
                stage.handle { reply, error -> error ?: reply }.await()
            } catch (e: CancellationException) {
                (stage as? Future<*>)?.cancel(true)
                throw e
            }
            when (settled) {
                is Throwable -> (settled as? CompletionException)?.cause ?: settled
                null -> NullPointerException(
                    "The stage returned by ${agent.javaClass.name}.call completed with null; complete it with the reply.",
                )
                else -> settled
            }
        } catch (e: Throwable) {
            // rethrown by finish, once the call's events are out
            e
        }
        stream.emitter.finish(outcome as? Throwable)
        return outcome as String
    }

    override fun snapshot(): AgentSnapshot? = agent.snapshot().orElse(null)

    override fun restore(snapshot: AgentSnapshot) {
        agent.restore(snapshot)
    }

    override fun session(): Agent? = agent.session().map { AgentAdapter(it) }.orElse(null)

    override fun equals(other: Any?): Boolean = other is AgentAdapter && other.agent == agent

    override fun hashCode(): Int = agent.hashCode()

    override fun toString(): String = "Agent($agent)"
}

/** What an [AsyncAgent] streams through: deferred on the thread running its `call`, blocking elsewhere (see [Emitter]). */
private class ScopeAdapter(val emitter: Emitter) : AsyncAgentScope {
    @Volatile
    var actionThread: Thread? = null

    override fun token(text: String) {
        emitter.emit(Streamed.Token(text), deferred = Thread.currentThread() === actionThread)
    }

    override fun step(description: String) {
        emitter.emit(Streamed.Step(description), deferred = Thread.currentThread() === actionThread)
    }

    override fun emit(payload: Any) {
        emitter.emit(payload, deferred = Thread.currentThread() === actionThread)
    }
}

/** A token or step waiting for its turn in the [Emitter]; any other item is a payload of its own. */
private sealed class Streamed {
    class Token(val text: String) : Streamed()

    class Step(val description: String) : Streamed()
}

private suspend fun Any.sendTo(scope: AgentScope) {
    when (this) {
        is Streamed.Token -> scope.token(text)
        is Streamed.Step -> scope.step(description)
        else -> scope.emit(this)
    }
}
