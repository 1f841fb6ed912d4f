package dev.trellis.langchain4j

import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.builtins.serializer

/**
 * The state of a [voting] graph: the question in [messages] (start a run with it), one [candidates] answer per voter
 * (in voter order), the chosen [answer] and the index of the voter who gave it ([winner]).
 *
 * ```kotlin
 * val result = vote.invoke(stateOf(VoteState.messages to listOf(Message.User("Capital of Australia?"))))
 * println(result.state[VoteState.answer])
 * ```
 */
public object VoteState : StateSchema("voting") {
    /** The question, as a conversation; every voter gets all of it. */
    @JvmField
    public val messages: StateKey<List<Message>> = Conversation.key(this, "messages")

    /** The voters' indices, 0 until the number of voters: written by node `ballot`, mapped over by node `vote`. */
    @JvmField
    public val voters: StateKey<List<Int>> = key("voters", emptyList())

    /** The voters' answers, in voter order (whatever order they finished in). */
    @JvmField
    public val candidates: StateKey<List<String>> =
        key("candidates", ListSerializer(String.serializer()), List::class.java, false, emptyList(), Reducer.append())

    /** The chosen answer. */
    @JvmField
    public val answer: StateKey<String> = key("answer", "")

    /** The index of the voter whose answer was chosen (-1 before the decision). */
    @JvmField
    public val winner: StateKey<Int> = key("winner", -1)
}

/**
 * How a [voting] graph picks one of its candidates: by [majority] or by a [judge] model.
 */
public class Decision private constructor(
    internal val judge: ChatModel?,
    internal val instructions: String,
) {
    override fun toString(): String = if (judge == null) "Decision.majority" else "Decision.judge"

    /** Makes decisions. */
    public companion object {
        /** The judge's default instructions. */
        public const val JUDGE_INSTRUCTIONS: String =
            "You judge candidate answers to the conversation above. Pick the best one: correct, complete and clear. " +
                "Answer with its number only."

        /**
         * The answer given most often wins. Answers are compared after trimming, ignoring case, runs of whitespace
         * and a final period. A tie goes to the tied answer given first, in voter order (the lowest voter index):
         * put the model you trust most first, or use a [judge].
         */
        @JvmStatic
        public fun majority(): Decision = Decision(null, "")

        /**
         * A [model] reads the conversation and the numbered candidates and answers with the number of the best (the
         * first whole number in its answer, from 1); an answer naming no candidate fails node `decide`, whose
         * retry policy asks again.
         */
        @JvmStatic
        @JvmOverloads
        public fun judge(model: ChatModel, instructions: String = JUDGE_INSTRUCTIONS): Decision =
            Decision(model, instructions)
    }
}

/**
 * Voting as a graph over [VoteState]: node `ballot` lists the voters, map node `vote` asks each of [models] the
 * question in [VoteState.messages] (after [system], when given) — each voter a map task, all in parallel up to
 * [maxParallel] — and node `decide` picks one answer by [decision] and writes it to [VoteState.answer] and its
 * voter's index to [VoteState.winner]. For N samples of one model, pass it N times (`List(5) { model }`): each call
 * samples anew (give the model a temperature above 0).
 *
 * Each voter's call is a task of its own: retried by [retry] on its own, checkpointed when it ends (a resumed run
 * asks only the voters that had not answered), visible in events with path `vote[i]`. Every call charges its tokens
 * to [meters], the judge's too. Embed it as a subgraph node (input [VoteState.messages], output
 * [VoteState.answer]).
 *
 * ```kotlin
 * val vote = voting(listOf(gpt, claude, llama), Decision.majority())
 * ```
 */
@JvmSynthetic
public fun voting(
    models: List<ChatModel>,
    decision: Decision = Decision.majority(),
    system: String? = null,
    id: String = "voting",
    maxParallel: Int = Int.MAX_VALUE,
    retry: Retry? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
): Graph {
    require(models.isNotEmpty()) { "Voting '$id' has no models; give it at least one voter." }
    return graph(id, VoteState) {
        val ballot = node("ballot") { set(VoteState.voters, models.indices.toList()) }
        val vote =
            map("vote", over = VoteState.voters, maxConcurrency = maxParallel, retry = retry) { voter ->
                val request = ChatRequest.builder().messages(withSystem(system, get(VoteState.messages))).build()
                val text = chatMetered(models[voter], request, meters).aiMessage().text().orEmpty()
                set(VoteState.candidates, listOf(text))
            }
        val decide =
            node("decide", retry = retry, description = decision.toString()) {
                val candidates = get(VoteState.candidates)
                val judge = decision.judge
                val winner =
                    if (judge == null) {
                        majorityOf(candidates)
                    } else {
                        val messages = withSystem(system, get(VoteState.messages)) + judgePrompt(decision, candidates)
                        val request = ChatRequest.builder().messages(messages).build()
                        pickCandidate(
                            chatMetered(judge, request, meters).aiMessage().text().orEmpty(),
                            candidates,
                            nodeId,
                        )
                    }
                set(VoteState.winner, winner)
                set(VoteState.answer, candidates[winner])
            }
        start(ballot)
        ballot then vote
        vote then decide
    }
}

private fun withSystem(system: String?, messages: List<Message>) =
    (if (system == null) messages else listOf(Message.System(system)) + messages).map { it.toChatMessage() }

private fun judgePrompt(decision: Decision, candidates: List<String>) =
    Message.User(
        decision.instructions + "\n\n" +
            candidates.withIndex().joinToString("\n\n") { (i, text) -> "[${i + 1}]\n$text" },
    ).toChatMessage()

/** The index of the majority answer; ties go to the lowest voter index. */
internal fun majorityOf(candidates: List<String>): Int {
    val groups = candidates.indices.groupBy { normalized(candidates[it]) }.values
    // groupBy keeps first-occurrence order: maxBy keeps the first of equal counts, the one answered first.
    return groups.maxBy { it.size }.first()
}

private fun normalized(answer: String): String =
    answer.trim().removeSuffix(".").trim().replace(Regex("\\s+"), " ").lowercase()

internal fun pickCandidate(answer: String, candidates: List<String>, nodeId: String): Int {
    val number = Regex("\\d+").find(answer)?.value?.toIntOrNull()
    check(number != null && number in 1..candidates.size) {
        "Node '$nodeId' asked the judge for the number of the best of ${candidates.size} candidates and got " +
            "'${answer.take(200)}'; give the node a retry policy, or make the judge's instructions clearer."
    }
    return number - 1
}

/**
 * Builds a [voting] graph from Java.
 *
 * ```java
 * Graph vote = Voting.builder().model(gpt).model(claude).model(llama).decision(Decision.majority()).build();
 * Graph samples = Voting.builder().samples(model, 5).build();
 * ```
 */
public class Voting private constructor() {
    private val models = ArrayList<ChatModel>()
    private var decision = Decision.majority()
    private var system: String? = null
    private var id = "voting"
    private var maxParallel = Int.MAX_VALUE
    private var retry: Retry? = null
    private var meters = TokenMeters.DEFAULT

    /** Adds a voter. */
    public fun model(model: ChatModel): Voting = apply { models += model }

    /** Adds [count] voters that are all [model] (N samples of one model). */
    public fun samples(model: ChatModel, count: Int): Voting = apply { repeat(count) { models += model } }

    /** How the answer is picked ([Decision.majority] by default). */
    public fun decision(decision: Decision): Voting = apply { this.decision = decision }

    /** A system prompt sent before the question to every voter and the judge (none by default). */
    public fun system(system: String?): Voting = apply { this.system = system }

    /** The graph's id ("voting" by default). */
    public fun id(id: String): Voting = apply { this.id = id }

    /** How many voters are asked at once (all by default). */
    public fun maxParallel(max: Int): Voting = apply { maxParallel = max }

    /** The retry policy of each voter's call and of the decision (none by default). */
    public fun retry(retry: Retry?): Voting = apply { this.retry = retry }

    /** The budget meters each call charges ([TokenMeters.DEFAULT] by default). */
    public fun meters(meters: TokenMeters): Voting = apply { this.meters = meters }

    /** The voting graph. */
    public fun build(): Graph = voting(models.toList(), decision, system, id, maxParallel, retry, meters)

    /** Starts a builder. */
    public companion object {
        /** A builder of a voting graph; add voters with [model] or [samples]. */
        @JvmStatic
        public fun builder(): Voting = Voting()
    }
}
