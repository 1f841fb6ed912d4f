package dev.trellis.mcp

import dev.langchain4j.agent.tool.ToolSpecification
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.reactAgent
import dev.trellis.langchain4j.toolNode
import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException
import io.modelcontextprotocol.client.transport.ServerParameters
import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.spec.McpError
import io.modelcontextprotocol.spec.McpSchema
import java.util.concurrent.Semaphore
import java.util.function.Supplier
import java.time.Duration as JavaDuration

/**
 * The tools, resources and prompts of an MCP server, through the official MCP Java SDK's client: a server started as
 * a child process and spoken to over its standard input and output ([stdio]), or a remote one over streamable HTTP
 * ([http]) or HTTP with server-sent events ([sse]). [Builder.start] connects, initializes the session and lists the
 * tools; [close] ends the session (and stops a child process). The tools are LangChain4j [ToolSpecification]s whose
 * calls go to the server: add them to a [Tools] ([tools], or [addTo] next to other tools) and give those to a
 * [toolNode] or a [reactAgent], where each call is a map task like any tool's (events, retry, timeout, checkpointed:
 * a completed call never runs again). Nodes read the server's resources and prompts with [mcpResourceNode] and
 * [mcpPromptNode] (Java: [McpActions]).
 *
 * Whoever starts an `McpTools` closes it (`use { }`, try-with-resources), after the runs that use it; a run resumed
 * in another process uses the `McpTools` that process started. Errors (`docs/agents.md`, "MCP tools"): a server that
 * does not start, does not answer within [Builder.initializationTimeout] or a call not answered within
 * [Builder.requestTimeout] fails with an [McpToolException] naming the server, the tool and (for a child process) the
 * last lines the server wrote to its standard error; a tool result marked as an error is given to the model as its
 * result, prefixed with `Error: ` (or fails the attempt with [Builder.failOnToolError]).
 */
public class McpTools private constructor(
    private val server: String,
    private val connection: McpConnection,
    private val json: McpJsonMapper,
    private val failOnToolError: Boolean,
    /** Permits for calls waiting on the server, when [Builder.maxConcurrentCalls] limits them. */
    private val permits: Semaphore?,
    /** The specifications of the server's tools, in the order it listed them. */
    public val specifications: List<ToolSpecification>,
) : AutoCloseable {
    /** The names of the server's tools. */
    public val names: List<String> get() = specifications.map { it.name() }

    /** The server's tools alone, as [Tools] (none requires approval; use [addTo] to add that, or other tools). */
    public val tools: Tools get() = addTo(Tools.builder()).build()

    /** Adds every tool of the server to [builder] and returns it, so the same [Tools] holds local tools too. */
    public fun addTo(builder: Tools.Builder): Tools.Builder = builder.apply {
        for (specification in specifications) add(specification) { arguments -> call(specification.name(), arguments) }
    }

    /**
     * Calls tool [name] with [arguments] (a JSON object, as text) and returns the text of its result. Blocks until
     * the server answers, at most the request timeout (after waiting its turn when [Builder.maxConcurrentCalls]
     * limits the calls); an interrupted thread stops waiting.
     */
    public fun call(name: String, arguments: String): String {
        val request = McpSchema.CallToolRequest.builder(name).arguments(json, arguments.ifBlank { "{}" }).build()
        permits?.acquire()
        val result =
            try {
                ask("the call of tool '$name'", " Its tools are $names.") { connection.callTool(request) }
            } finally {
                permits?.release()
            }
        val text = result.text(json)
        if (result.isError == true) {
            if (failOnToolError) {
                throw McpToolException("Tool '$name' of MCP server '$server' answered with an error: $text", null)
            }
            return "Error: $text"
        }
        return text
    }

    /** The resources the server lists (all pages), each with its address, name and type. */
    public fun resources(): List<McpResource> =
        ask("the listing of its resources") {
            connection.pages({ it.listResources() }, { c, at -> c.listResources(at) }, { it.resources() }) {
                it.nextCursor()
            }
        }.map { McpResource(it.uri(), it.name(), it.description(), it.mimeType()) }

    /**
     * The text of the resource at [uri]: its text contents, one per line (a binary content as a placeholder naming
     * its type and size). Fails with an [McpToolException] when the server has no such resource.
     */
    public fun readResource(uri: String): String {
        val request = McpSchema.ReadResourceRequest.builder(uri).build()
        val result = ask("the read of resource '$uri'") { connection.request { it.readResource(request) } }
        return result.contents().joinToString("\n") { it.text() }
    }

    /** The prompts the server lists (all pages), each with its arguments. */
    public fun prompts(): List<McpPrompt> =
        ask("the listing of its prompts") {
            connection.pages({ it.listPrompts() }, { c, at -> c.listPrompts(at) }, { it.prompts() }) { it.nextCursor() }
        }.map { prompt ->
            McpPrompt(
                prompt.name(),
                prompt.description(),
                prompt.arguments().orEmpty().map {
                    McpPromptArgument(it.name(), it.description(), it.required() == true)
                },
            )
        }

    /**
     * The messages of prompt [name] filled with [arguments]: the server's user messages as [Message.User], its
     * assistant messages as [Message.Ai], each content as text (as a tool result's). Fails with an
     * [McpToolException] when the server has no such prompt or refuses the arguments.
     */
    @JvmOverloads
    public fun prompt(name: String, arguments: Map<String, String> = emptyMap()): List<Message> {
        val request = McpSchema.GetPromptRequest.builder(name).arguments(arguments).build()
        val result = ask("the prompt '$name'") { connection.request { it.getPrompt(request) } }
        return result.messages().map { message ->
            val text = listOf(message.content()).text()
            if (message.role() == McpSchema.Role.ASSISTANT) Message.Ai(text) else Message.User(text)
        }
    }

    /** Runs one request, turning its failures into [McpToolException]s that name the server and [what] was asked. */
    private fun <T> ask(what: String, refusedHint: String = "", request: () -> T): T =
        try {
            request()
        } catch (e: McpServerExited) {
            throw McpToolException(
                "MCP server '$server' ended (process ${e.pid}) before it answered $what" +
                    connection.stderr.describe() +
                    ". Close these McpTools and start them again; a resumed run calls only the tools that had not " +
                    "completed.",
                e,
            )
        } catch (e: McpError) {
            throw McpToolException("MCP server '$server' refused $what: ${e.message}.$refusedHint", e)
        } catch (e: InterruptedException) {
            throw e
        } catch (e: Exception) {
            // a timeout (java.util.concurrent.TimeoutException, checked) or a transport error
            val refused = generateSequence<Throwable>(e) { it.cause }
                .filterIsInstance<McpHttpClientTransportAuthorizationException>().firstOrNull()
            if (refused != null) {
                throw McpToolException(
                    "MCP server '$server' refused the credentials of $what (HTTP ${refused.responseInfo.statusCode()}" +
                        "). Give them with header(name, value) or headers(supplier) on McpTools.http.",
                    e,
                )
            }
            throw McpToolException(
                "MCP server '$server' did not answer $what (${e.message ?: e.javaClass.name})" +
                    connection.stderr.describe() + ".",
                e,
            )
        }

    /** Ends the session: closes it gracefully, then ends a child process if it has not ended. */
    override fun close(): Unit = connection.close()

    override fun toString(): String = "McpTools($server, $names)"

    /**
     * How to reach a server and talk to it; [start] connects. Options for a child process ([args], [env]) and for a
     * remote server ([header], [headers], [connectTimeout]) fail on the other kind, naming the right one.
     */
    public class Builder internal constructor(
        private val command: String?,
        args: List<String>,
        private val url: String?,
        private val sse: Boolean,
    ) {
        private val args = ArrayList(args)
        private val env = LinkedHashMap<String, String>()
        private val headers = LinkedHashMap<String, String>()
        private var dynamicHeaders: Supplier<Map<String, String>>? = null
        private var connectTimeout: JavaDuration = JavaDuration.ofSeconds(10)
        private var requestTimeout: JavaDuration = JavaDuration.ofSeconds(30)
        private var initializationTimeout: JavaDuration = JavaDuration.ofSeconds(30)
        private var only: Set<String>? = null
        private var failOnToolError = false
        private var maxConcurrentCalls = Int.MAX_VALUE

        private fun stdioOnly(option: String) = require(command != null) {
            "$option is for a server started as a child process (McpTools.stdio), not for $url; a remote server " +
                "takes header(...) and connectTimeout(...)."
        }

        private fun remoteOnly(option: String) = require(url != null) {
            "$option is for a remote server (McpTools.http or McpTools.sse), not for the child process '$command'; " +
                "a child process takes args(...) and env(...)."
        }

        /** Adds [args] to the command line of a child process. */
        public fun args(vararg args: String): Builder = apply {
            stdioOnly("args")
            this.args += args
        }

        /** Sets an environment variable of the child process (it inherits this process's environment too). */
        public fun env(name: String, value: String): Builder = apply {
            stdioOnly("env")
            env[name] = value
        }

        /** Sends header [name] with [value] on every HTTP request to a remote server (`Authorization`, API keys). */
        public fun header(name: String, value: String): Builder = apply {
            remoteOnly("header")
            headers[name] = value
        }

        /**
         * Sends the headers [supplier] gives on every HTTP request, asked again for each (a token that expires is
         * refreshed there); they replace a [header] of the same name.
         */
        public fun headers(supplier: Supplier<Map<String, String>>): Builder = apply {
            remoteOnly("headers")
            dynamicHeaders = supplier
        }

        /** How long connecting to a remote server may take (default 10 s); then the request fails. */
        public fun connectTimeout(timeout: JavaDuration): Builder = apply {
            remoteOnly("connectTimeout")
            connectTimeout = timeout
        }

        /** How long a tool call (or a read) may wait for the server's answer (default 30 s); then it fails. */
        public fun requestTimeout(timeout: JavaDuration): Builder = apply { requestTimeout = timeout }

        /** How long [start] (and a reconnection) waits for the session's initialization (default 30 s). */
        public fun initializationTimeout(timeout: JavaDuration): Builder = apply { initializationTimeout = timeout }

        /** Offers the model only the tools named [names]; [start] fails when the server has no tool of such a name. */
        public fun only(vararg names: String): Builder = apply { only = names.toSet() }

        /**
         * Makes a tool result marked as an error fail the call's attempt (retried by the tool node's retry policy)
         * instead of being given to the model, which by default reads it (prefixed `Error: `) and may correct itself.
         */
        public fun failOnToolError(): Builder = apply { failOnToolError = true }

        /**
         * Lets at most [calls] tool calls wait on the server at once; the others wait their turn, a wait the request
         * timeout does not count (the tool node's timeout does). By default there is no limit: the calls of one answer
         * go to the server in parallel. For a server that cannot take parallel requests, such as one on the MCP Java
         * SDK's stdio server transport (up to at least 2.1), which may drop an answer sent at the same moment as
         * another (that call then fails after the request timeout): `maxConcurrentCalls(1)`.
         */
        public fun maxConcurrentCalls(calls: Int): Builder = apply {
            require(calls >= 1) {
                "maxConcurrentCalls must be at least 1, not $calls (1 sends the calls one at a time)."
            }
            maxConcurrentCalls = calls
        }

        /**
         * Connects (starting a child process), initializes the session and lists the tools (all pages). Fails with an
         * [McpToolException] when the server does not start or answer in time; a child process is then stopped.
         */
        public fun start(): McpTools {
            val server = url ?: (listOf(command!!) + args).joinToString(" ") { it.shortened() }
            val json = McpJsonDefaults.getMapper()
            val stderr = ServerErrors()
            val timeouts = McpTimeouts(requestTimeout, initializationTimeout)
            var connection: McpConnection? = null
            try {
                connection =
                    if (url != null) {
                        val target = HttpTarget(url, sse, LinkedHashMap(headers), dynamicHeaders, connectTimeout)
                        val open = { openHttp(target, json, timeouts) }
                        McpConnection(open(), open, stderr, requestTimeout)
                    } else {
                        val parameters = ServerParameters.builder(command!!).args(args).env(env).build()
                        McpConnection(openStdio(parameters, json, stderr, timeouts), null, stderr, requestTimeout)
                    }
                val tools = connection.listTools()
                val wanted = only
                if (wanted != null) {
                    val missing = wanted - tools.map { it.name() }.toSet()
                    require(missing.isEmpty()) {
                        "MCP server '$server' has no tool named $missing; its tools are ${tools.map { it.name() }}."
                    }
                    tools.retainAll { it.name() in wanted }
                }
                val permits = if (maxConcurrentCalls == Int.MAX_VALUE) null else Semaphore(maxConcurrentCalls, true)
                val specifications = tools.map { it.toSpecification(json) }
                return McpTools(server, connection, json, failOnToolError, permits, specifications)
            } catch (e: IllegalArgumentException) {
                connection?.close()
                throw e
            } catch (e: Exception) {
                connection?.close()
                if (e is InterruptedException) throw e
                val refused = generateSequence<Throwable>(e) { it.cause }
                    .filterIsInstance<McpHttpClientTransportAuthorizationException>().firstOrNull()
                val why = when {
                    e is McpServerExited -> "ended (process ${e.pid})"
                    refused != null -> "Authorization refused, HTTP ${refused.responseInfo.statusCode()}: give the " +
                        "credentials with header(name, value) or headers(supplier)"
                    else -> e.message ?: e.javaClass.name
                }
                throw McpToolException(
                    "MCP server '$server' did not start or did not answer within $initializationTimeout " +
                        "($why)${stderr.describe()}.",
                    e,
                )
            }
        }
    }

    /** Makes [McpTools]. */
    public companion object {
        /** A server started as `command args…`, spoken to over its standard input and output. */
        @JvmStatic
        public fun stdio(command: String, vararg args: String): Builder = Builder(command, args.toList(), null, false)

        /** A remote server speaking streamable HTTP at [url] (the MCP endpoint, such as `https://host/mcp`). */
        @JvmStatic
        public fun http(url: String): Builder = Builder(null, emptyList(), checkedUrl(url), false)

        /**
         * A remote server that offers only the older HTTP with server-sent events transport, its event stream at
         * [url] (such as `https://host/sse`); prefer [http] for a server that speaks streamable HTTP.
         */
        @JvmStatic
        public fun sse(url: String): Builder = Builder(null, emptyList(), checkedUrl(url), true)

        private fun checkedUrl(url: String): String {
            require(url.startsWith("http://") || url.startsWith("https://")) {
                "An MCP server's URL starts with http:// or https://, not '$url' " +
                    "(for example http://localhost:8080/mcp)."
            }
            return url
        }
    }
}

/**
 * This argument as errors show it: whole up to [MAX_SHOWN_ARGUMENT] characters, else its start and end around an
 * ellipsis (a class path of a hundred jars would bury the message).
 */
private fun String.shortened(): String =
    if (length <= MAX_SHOWN_ARGUMENT) this else take(MAX_SHOWN_ARGUMENT / 2) + "…" + takeLast(MAX_SHOWN_ARGUMENT / 4)

private const val MAX_SHOWN_ARGUMENT = 120

/** An MCP server failed a tool call (or its start): the message names the server, the tool and what happened. */
public class McpToolException(message: String, cause: Throwable?) : RuntimeException(message, cause)
