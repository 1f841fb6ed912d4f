package dev.trellis.test.replay

import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.trellis.langchain4j.ToolFunction
import dev.trellis.langchain4j.Tools
import dev.trellis.test.internal.lineDiff
import kotlinx.serialization.json.Json
import java.nio.file.Files
import java.nio.file.Path

/**
 * A recording of a graph's model and tool calls, in a human-readable JSON file. Wrap the real models and tools
 * with [chatModel], [streamingChatModel] and [tools]: in [CassetteMode.RECORD] they call the real ones and the
 * cassette writes every call and its answer when closed (secrets redacted, see [Redaction]); in
 * [CassetteMode.REPLAY] they answer from the file, deterministically, without a network, and a call that is not
 * there fails with [CassetteMismatchException] naming the first divergent request and a diff.
 *
 * Replay matches each call to an unreplayed recorded call of the same kind with the same request (every message's
 * role and text, the tools offered, the response format), so parallel calls may come in any order.
 *
 * ```kotlin
 * Cassette.open(Path.of("src/test/resources/cassettes/research.json")).use { cassette ->
 *     val graph = researchGraph(cassette.chatModel(realModelOrNull), cassette.tools(realTools))
 *     graph.invoke(input)
 * } // RECORD: the file is written here; REPLAY: every recorded call must have been replayed
 * ```
 */
public class Cassette private constructor(
    /** The cassette's file. */
    public val path: Path,
    /** [CassetteMode.RECORD] or [CassetteMode.REPLAY] ([CassetteMode.AUTO] resolved when opened). */
    public val mode: CassetteMode,
    private val redaction: Redaction,
    private val strict: Boolean,
) : AutoCloseable {
    private val recorded = ArrayList<Interaction>()
    private val replay: Replay? = if (mode == CassetteMode.REPLAY) Replay(read(path)) else null

    /** Whether this cassette records (calls the real model and tools). */
    public val isRecording: Boolean get() = mode == CassetteMode.RECORD

    /**
     * A chat model that records [real]'s calls, or replays them. [real] may be null when replaying (CI has no key);
     * recording without it fails, saying so.
     */
    public fun chatModel(real: ChatModel?): ChatModel = CassetteChatModel(this, real?.takeIf { isRecording })

    /** A streaming model that records [real]'s streams (their tokens too), or replays them; [real] as [chatModel]. */
    public fun streamingChatModel(real: StreamingChatModel?): StreamingChatModel =
        CassetteStreamingChatModel(this, real?.takeIf { isRecording })

    /** [real] with every tool function recorded or replayed (`@Tool` methods and MCP tools alike). */
    public fun tools(real: Tools): Tools = real.wrap { specification, function -> tool(specification.name(), function) }

    /** Tool [name]'s function, recorded or replayed; [real] may be null when replaying. */
    public fun tool(name: String, real: ToolFunction?): ToolFunction = ToolFunction { arguments ->
        toolCall(name, arguments, real)
    }

    /** The calls recorded so far (recording) or still to replay (replaying). */
    public val remaining: Int get() = replay?.remaining() ?: recorded.size

    internal fun redact(text: String): String = redaction.apply(text)

    internal fun lookup(kind: String, lines: List<String>): Interaction = replay!!.take(kind, lines)

    @Synchronized
    internal fun add(interaction: Interaction) {
        recorded += interaction
    }

    internal fun requireReal(real: Any?, what: String): Nothing? {
        if (real == null && isRecording) {
            throw IllegalStateException(
                "Cassette $path is recording (mode RECORD) but no real $what was given to wrap; pass the real " +
                    "$what, or replay an existing cassette (${CassetteMode.VARIABLE}=replay).",
            )
        }
        return null
    }

    private fun toolCall(name: String, arguments: String, real: ToolFunction?): String {
        if (!isRecording) {
            val interaction = lookup(Interaction.TOOL, listOf("tool $name(${redact(arguments)})"))
            interaction.error?.let { throw RecordedFailureException(it.type, it.message) }
            return interaction.result ?: ""
        }
        val function = real ?: requireReal(null, "tool '$name'") ?: error("unreachable")
        val result =
            try {
                function.execute(arguments)
            } catch (e: Exception) {
                add(Interaction(Interaction.TOOL, tool = name, arguments = redact(arguments), error = errorOf(e)))
                throw e
            }
        add(Interaction(Interaction.TOOL, tool = name, arguments = redact(arguments), result = redact(result)))
        return result
    }

    internal fun errorOf(e: Throwable): RecordedError = RecordedError(e.javaClass.name, e.message?.let(::redact))

    /** Writes the recorded calls (recording); nothing to write when replaying. */
    @Synchronized
    public fun save() {
        if (!isRecording) return
        path.toAbsolutePath().parent?.let { Files.createDirectories(it) }
        Files.writeString(
            path,
            JSON.encodeToString(CassetteFile.serializer(), CassetteFile(1, recorded.toList())) + "\n",
        )
    }

    /**
     * Fails when recorded calls were not replayed (the graph made fewer calls than when it was recorded), naming the
     * first of them. Called by [close] when the cassette was opened strict (the default).
     */
    public fun assertAllReplayed() {
        val left = replay?.unused().orEmpty()
        if (left.isNotEmpty()) {
            throw CassetteMismatchException(
                "${left.size} call(s) recorded in cassette $path were not replayed: the graph made fewer calls " +
                    "than when it was recorded. The first one not replayed:\n" +
                    left.first().requestLines().joinToString("\n") { "  - $it" } + "\n" + RERECORD,
            )
        }
    }

    /** Recording: writes the file. Replaying: checks every call was replayed (unless opened with strict off). */
    override fun close() {
        if (isRecording) {
            save()
        } else if (strict) {
            assertAllReplayed()
        }
    }

    override fun toString(): String = "Cassette($path, $mode)"

    /** The calls of a cassette being replayed. */
    private inner class Replay(private val interactions: List<Interaction>) {
        private val used = BooleanArray(interactions.size)
        private val byRequest = HashMap<String, ArrayDeque<Int>>()

        init {
            interactions.forEachIndexed { i, it ->
                byRequest.getOrPut(key(it.kind, it.requestLines())) { ArrayDeque() }.addLast(i)
            }
        }

        private fun key(kind: String, lines: List<String>) = kind + "\n" + lines.joinToString("\n")

        @Synchronized
        fun take(kind: String, lines: List<String>): Interaction {
            val index = byRequest[key(kind, lines)]?.removeFirstOrNull() ?: throw diverged(kind, lines)
            used[index] = true
            return interactions[index]
        }

        @Synchronized
        fun remaining(): Int = used.count { !it }

        @Synchronized
        fun unused(): List<Interaction> = interactions.filterIndexed { i, _ -> !used[i] }

        private fun diverged(kind: String, lines: List<String>): CassetteMismatchException {
            val what = when (kind) {
                Interaction.TOOL -> "tool call"
                Interaction.STREAM -> "streaming model request"
                else -> "chat model request"
            }
            val done = used.count { it }
            val next = interactions.indices.firstOrNull { !used[it] && interactions[it].kind == kind }
            val comparison =
                if (next == null) {
                    "Every recorded $what was already replayed; this one is new:\n" +
                        lines.joinToString("\n") { "  + $it" }
                } else {
                    "The first recorded $what not replayed yet (call #${next + 1} in the cassette) against this " +
                        "one (- expected, + actual):\n" + lineDiff(interactions[next].requestLines(), lines)
                }
            return CassetteMismatchException(
                "A $what is not in cassette $path: the graph's calls changed since it was recorded (after " +
                    "$done replayed call(s)). $comparison\n$RERECORD",
            )
        }
    }

    /** Opens cassettes. */
    public companion object {
        @OptIn(kotlinx.serialization.ExperimentalSerializationApi::class)
        private val JSON = Json {
            prettyPrint = true
            prettyPrintIndent = "  "
            explicitNulls = false
            encodeDefaults = false
            ignoreUnknownKeys = true
        }

        private const val RERECORD: String =
            "If the change is intended, re-record the cassette: run the test with ${CassetteMode.VARIABLE}=record " +
                "(or -D${CassetteMode.PROPERTY}=record) and the real model, then commit the new file."

        /**
         * Opens the cassette at [path] in [mode] (by default [CassetteMode.fromEnvironment]), redacting [redaction]
         * ([Redaction.DEFAULT] by default). [strict]: closing a replayed cassette fails when recorded calls were not
         * replayed. Replaying a file that does not exist fails, saying how to record it.
         */
        @JvmStatic
        @JvmOverloads
        public fun open(
            path: Path,
            mode: CassetteMode = CassetteMode.fromEnvironment(),
            redaction: Redaction = Redaction.DEFAULT,
            strict: Boolean = true,
        ): Cassette = Cassette(path, mode.resolve(path), redaction, strict)

        private fun read(path: Path): List<Interaction> {
            if (!Files.exists(path)) {
                throw IllegalStateException(
                    "Cassette $path does not exist, and the mode is REPLAY. Record it once with the real model: run " +
                        "the test with ${CassetteMode.VARIABLE}=record (or -D${CassetteMode.PROPERTY}=record), or " +
                        "with mode AUTO.",
                )
            }
            return JSON.decodeFromString(CassetteFile.serializer(), Files.readString(path)).interactions
        }
    }
}
