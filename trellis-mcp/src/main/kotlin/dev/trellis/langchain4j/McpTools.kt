package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolSpecification
import io.modelcontextprotocol.client.transport.ServerParameters
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.spec.McpError
import io.modelcontextprotocol.spec.McpSchema
import java.util.concurrent.Semaphore
import java.time.Duration as JavaDuration

/**
 * The tools of an MCP server started as a child process and spoken to over its standard input and output (the
 * official MCP Java SDK's stdio client). [start] launches the server, initializes the session and lists its tools;
 * [close] stops the server. The tools are LangChain4j [ToolSpecification]s whose calls go to the server: add them to
 * a [Tools] ([tools], or [addTo] next to other tools) and give those to a [toolNode] or a [reactAgent], where each
 * call is a map task like any tool's (events, retry, timeout, checkpointed: a completed call never runs again).
 *
 * Whoever starts an `McpTools` closes it (`use { }`, try-with-resources), after the runs that use its tools; a run
 * resumed in another process uses the `McpTools` that process started. Errors (`docs/agents.md`, "MCP tools"):
 * a server that does not start, does not answer within [Builder.initializationTimeout] or a call not answered within
 * [Builder.requestTimeout] fails with an [McpToolException] naming the server, the tool and the last lines the
 * server wrote to its standard error; a tool result marked as an error is given to the model as its result,
 * prefixed with `Error: ` (or fails the attempt with [Builder.failOnToolError]).
 *
 * ```kotlin
 * McpTools.stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp").start().use { files ->
 *     reactAgent(model, files.tools).invoke(stateOf(AgentState.messages to listOf(Message.User("List /tmp"))))
 * }
 * ```
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
        val request = McpSchema.CallToolRequest(json, name, arguments.ifBlank { "{}" })
        permits?.acquire()
        val result =
            try {
                connection.callTool(request)
            } catch (e: McpServerExited) {
                throw McpToolException(
                    "MCP server '$server' ended (process ${e.pid}) before it answered the call of tool '$name'" +
                        connection.stderr.describe() + ". Close these McpTools and start them again; a resumed " +
                        "run calls only the tools that had not completed.",
                    e,
                )
            } catch (e: McpError) {
                throw McpToolException(
                    "MCP server '$server' refused the call of tool '$name': ${e.message}. Its tools are $names.",
                    e,
                )
            } catch (e: InterruptedException) {
                throw e
            } catch (e: Exception) {
                // a timeout (java.util.concurrent.TimeoutException, checked) or a transport error
                throw McpToolException(
                    "MCP server '$server' did not answer the call of tool '$name' (${e.message ?: e.javaClass.name})" +
                        connection.stderr.describe() + ".",
                    e,
                )
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

    /** Stops the server: closes the session gracefully, then ends the process if it has not ended. */
    override fun close(): Unit = connection.close()

    override fun toString(): String = "McpTools($server, $names)"

    /** How to start a server and talk to it; [start] does. */
    public class Builder internal constructor(private val command: String, args: List<String>) {
        private val args = ArrayList(args)
        private val env = LinkedHashMap<String, String>()
        private var requestTimeout: JavaDuration = JavaDuration.ofSeconds(30)
        private var initializationTimeout: JavaDuration = JavaDuration.ofSeconds(30)
        private var only: Set<String>? = null
        private var failOnToolError = false
        private var maxConcurrentCalls = Int.MAX_VALUE

        /** Adds [args] to the command line. */
        public fun args(vararg args: String): Builder = apply { this.args += args }

        /** Sets an environment variable of the server process (it inherits this process's environment too). */
        public fun env(name: String, value: String): Builder = apply { env[name] = value }

        /** How long a tool call may wait for the server's answer (default 30 s); then it fails. */
        public fun requestTimeout(timeout: JavaDuration): Builder = apply { requestTimeout = timeout }

        /** How long [start] waits for the server to answer the session's initialization (default 30 s). */
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
         * SDK's stdio server transport up to at least 0.17, which may drop an answer sent at the same moment as
         * another (that call then fails after the request timeout): `maxConcurrentCalls(1)`.
         */
        public fun maxConcurrentCalls(calls: Int): Builder = apply {
            require(calls >= 1) {
                "maxConcurrentCalls must be at least 1, not $calls (1 sends the calls one at a time)."
            }
            maxConcurrentCalls = calls
        }

        /**
         * Starts the server process, initializes the session and lists the tools (all pages). Fails with an
         * [McpToolException] when the server does not start or answer in time; the process is then stopped.
         */
        public fun start(): McpTools {
            val server = (listOf(command) + args).joinToString(" ") { it.shortened() }
            val json = McpJsonMapper.getDefault()
            val parameters = ServerParameters.builder(command).args(args).env(env).build()
            val stderr = ServerErrors()
            var connection: McpConnection? = null
            try {
                connection = McpConnection.open(parameters, json, stderr, requestTimeout, initializationTimeout)
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
                val why = if (e is McpServerExited) "ended (process ${e.pid})" else (e.message ?: e.javaClass.name)
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
        public fun stdio(command: String, vararg args: String): Builder = Builder(command, args.toList())
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
