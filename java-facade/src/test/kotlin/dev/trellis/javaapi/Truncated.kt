package dev.trellis.javaapi

import kotlinx.coroutines.flow.take
import kotlinx.coroutines.jdk9.asFlow
import kotlinx.coroutines.jdk9.flowPublish
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactive.publish
import org.reactivestreams.Publisher
import java.util.concurrent.Flow

/**
 * For the TCK's requests of fewer elements than any whole run has (a run has at least 4 events): the
 * first [n] events of [events], consumed through our publisher and republished by `publish`.
 */
object Truncated {
    @JvmStatic
    fun <T : Any> reactive(events: Publisher<T>, n: Long): Publisher<T> = publish {
        if (n > 0) events.asFlow().take(n.toInt()).collect { send(it) }
    }

    @JvmStatic
    fun <T : Any> flow(events: Flow.Publisher<T>, n: Long): Flow.Publisher<T> = flowPublish {
        if (n > 0) events.asFlow().take(n.toInt()).collect { send(it) }
    }
}
