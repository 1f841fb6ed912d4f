package dev.trellis.runtime

import dev.trellis.graph.InternalTrellisApi
import kotlin.coroutines.CoroutineContext

/**
 * Marks the coroutines of the Java facade's calls, so that the runtime's error messages name the calls a Java
 * user makes (`runner.resumeAsync("r1")`) instead of the Kotlin ones (`graph.resume("r1", options)`). It changes
 * nothing else.
 */
@InternalTrellisApi
public object JavaCaller : CoroutineContext.Element, CoroutineContext.Key<JavaCaller> {
    override val key: CoroutineContext.Key<*> get() = this

    override fun toString(): String = "JavaCaller"
}
