package dev.trellis.a2a

import com.fasterxml.jackson.core.JsonParseException
import com.fasterxml.jackson.core.JsonProcessingException
import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpHandler
import io.a2a.server.ServerCallContext
import io.a2a.server.TransportMetadata
import io.a2a.server.auth.UnauthenticatedUser
import io.a2a.spec.CancelTaskRequest
import io.a2a.spec.GetTaskRequest
import io.a2a.spec.InternalError
import io.a2a.spec.InvalidParamsError
import io.a2a.spec.InvalidParamsJsonMappingException
import io.a2a.spec.InvalidRequestError
import io.a2a.spec.JSONParseError
import io.a2a.spec.JSONRPCErrorResponse
import io.a2a.spec.JSONRPCResponse
import io.a2a.spec.MethodNotFoundError
import io.a2a.spec.MethodNotFoundJsonMappingException
import io.a2a.spec.NonStreamingJSONRPCRequest
import io.a2a.spec.SendMessageRequest
import io.a2a.spec.SendStreamingMessageRequest
import io.a2a.spec.StreamingJSONRPCRequest
import io.a2a.spec.TaskResubscriptionRequest
import io.a2a.spec.TransportProtocol
import io.a2a.spec.UnsupportedOperationError
import io.a2a.transport.jsonrpc.context.JSONRPCContextKeys
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler
import io.a2a.util.Utils
import java.io.OutputStream
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Flow

/**
 * A2A's JSON-RPC binding over the JDK's HTTP server, as the SDK's reference server routes it: the agent card at
 * `GET /.well-known/agent-card.json`; `POST /` a JSON-RPC request, answered with one JSON response, or, for
 * `message/stream` and `tasks/resubscribe`, with a stream of server-sent events (one response per event) that ends
 * with the task's final event. The handler's thread writes the stream and waits for its end.
 */
internal class JsonRpcHttp(private val handler: JSONRPCHandler) : HttpHandler {
    override fun handle(exchange: HttpExchange) {
        try {
            when {
                exchange.requestMethod == "GET" && exchange.requestURI.path == CARD_PATH ->
                    send(exchange, 200, Utils.toJsonString(handler.agentCard))
                exchange.requestMethod == "POST" && exchange.requestURI.path == "/" -> call(exchange)
                else -> send(exchange, 404, """{"error": "no such endpoint; A2A is at POST / and GET $CARD_PATH"}""")
            }
        } finally {
            exchange.close()
        }
    }

    private fun call(exchange: HttpExchange) {
        val body = exchange.requestBody.readAllBytes().decodeToString()
        val headers = exchange.requestHeaders.entries.associate { (name, values) -> name to values.joinToString(",") }
        val state = HashMap<String, Any>()
        state[JSONRPCContextKeys.HEADERS_KEY] = headers
        val context = ServerCallContext(UnauthenticatedUser.INSTANCE, state, emptySet())
        val publisher = try {
            route(body, state, context, exchange)
        } catch (e: JsonProcessingException) {
            send(exchange, 200, Utils.toJsonString(errorOf(e)))
            null
        } catch (e: Exception) {
            send(exchange, 200, Utils.toJsonString(JSONRPCErrorResponse(InternalError(e.message))))
            null
        }
        if (publisher != null) stream(exchange, publisher)
    }

    /** Answers a plain request (and returns null), or returns the stream of a streaming one. */
    private fun route(
        body: String,
        state: MutableMap<String, Any>,
        context: ServerCallContext,
        exchange: HttpExchange,
    ): Flow.Publisher<out JSONRPCResponse<*>>? {
        val node = Utils.OBJECT_MAPPER.readTree(body)
        val method = node?.get("method")?.takeIf { it.isTextual }?.asText()
        if (method != null) state[JSONRPCContextKeys.METHOD_NAME_KEY] = method
        if (method == SendStreamingMessageRequest.METHOD || method == TaskResubscriptionRequest.METHOD) {
            return when (val request = Utils.OBJECT_MAPPER.treeToValue(node, StreamingJSONRPCRequest::class.java)) {
                is SendStreamingMessageRequest -> handler.onMessageSendStream(request, context)
                is TaskResubscriptionRequest -> handler.onResubscribeToTask(request, context)
                else -> null.also { send(exchange, 200, unsupported(request.id)) }
            }
        }
        val plain = Utils.OBJECT_MAPPER.treeToValue(node, NonStreamingJSONRPCRequest::class.java)
        val response = when (val request = plain) {
            is SendMessageRequest -> Utils.toJsonString(handler.onMessageSend(request, context))
            is GetTaskRequest -> Utils.toJsonString(handler.onGetTask(request, context))
            is CancelTaskRequest -> Utils.toJsonString(handler.onCancelTask(request, context))
            else -> unsupported(request.id)
        }
        send(exchange, 200, response)
        return null
    }

    private fun errorOf(e: JsonProcessingException): JSONRPCErrorResponse = when (e) {
        is MethodNotFoundJsonMappingException -> JSONRPCErrorResponse(e.id, MethodNotFoundError())
        is InvalidParamsJsonMappingException -> JSONRPCErrorResponse(e.id, InvalidParamsError())
        else -> if (e.cause is JsonParseException || e is JsonParseException) {
            JSONRPCErrorResponse(JSONParseError())
        } else {
            JSONRPCErrorResponse(InvalidRequestError())
        }
    }

    /** Writes each response of [publisher] as a server-sent event, one at a time, until it completes. */
    private fun stream(exchange: HttpExchange, publisher: Flow.Publisher<out JSONRPCResponse<*>>) {
        exchange.responseHeaders.set("Content-Type", "text/event-stream")
        exchange.responseHeaders.set("Cache-Control", "no-cache")
        exchange.sendResponseHeaders(200, 0)
        val out: OutputStream = exchange.responseBody
        val done = CountDownLatch(1)
        publisher.subscribe(
            object : Flow.Subscriber<JSONRPCResponse<*>> {
                private lateinit var subscription: Flow.Subscription
                private var id = 0L

                override fun onSubscribe(subscription: Flow.Subscription) {
                    this.subscription = subscription
                    subscription.request(1)
                }

                override fun onNext(item: JSONRPCResponse<*>) {
                    try {
                        out.write("data: ${Utils.toJsonString(item)}\nid: ${id++}\n\n".toByteArray())
                        out.flush()
                        subscription.request(1)
                    } catch (e: java.io.IOException) {
                        subscription.cancel() // the client went away
                        done.countDown()
                    }
                }

                override fun onError(throwable: Throwable) {
                    done.countDown()
                }

                override fun onComplete() {
                    done.countDown()
                }
            },
        )
        done.await()
    }

    private fun unsupported(id: Any?): String =
        Utils.toJsonString(JSONRPCErrorResponse(id, UnsupportedOperationError()))

    private fun send(exchange: HttpExchange, status: Int, json: String) {
        val bytes = json.toByteArray()
        exchange.responseHeaders.set("Content-Type", "application/json")
        exchange.sendResponseHeaders(status, bytes.size.toLong())
        exchange.responseBody.write(bytes)
    }

    companion object {
        const val CARD_PATH: String = "/.well-known/agent-card.json"
    }
}

/** Tells the SDK's agent card validator that this server speaks JSON-RPC (a `ServiceLoader` provider). */
internal class JsonRpcTransportMetadata : TransportMetadata {
    override fun getTransportProtocol(): String = TransportProtocol.JSONRPC.asString()
}
