package dev.trellis.langchain4j

import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.output.TokenUsage
import dev.trellis.graph.NodeScope
import dev.trellis.runtime.agent.TokenMeterSet
import dev.trellis.runtime.agent.costPerMillionTokens

/**
 * The price of a model call, from the tokens it used, in the unit of the cost meter (dollars, euros, credits).
 *
 * ```kotlin
 * val price = TokenPrice.perMillionTokens(input = 3.0, output = 15.0)
 * ```
 */
public fun interface TokenPrice {
    /** The cost of a call that used [usage]; finite and not negative. */
    public fun cost(usage: TokenUsage): Double

    /** Makes prices. */
    public companion object {
        /** A price per million input tokens ([input]) and per million output tokens ([output]). */
        @JvmStatic
        public fun perMillionTokens(input: Double, output: Double): TokenPrice = TokenPrice { usage ->
            costPerMillionTokens(usage.inputTokenCount(), usage.outputTokenCount(), input, output)
        }
    }
}

/**
 * Which budget meters (`docs/semantics.md` §13.4) a model call charges, from the [TokenUsage] of its response: the
 * input tokens to meter [input], the output tokens to meter [output] (give both the same name for a single meter of
 * all tokens), and, with a [TokenPrice], the call's cost to meter [cost]. A null meter name is not charged.
 *
 * Every node of this module that calls a model charges its [DEFAULT] meters unless given others: `tokens.input` and
 * `tokens.output`. A response without token usage (or without one of the counts) charges nothing for it. A
 * `Budget` with a limit on one of these meters stops the run when it is exceeded (`LimitExceededException`).
 *
 * ```kotlin
 * val meters = TokenMeters.builder().cost("usd", TokenPrice.perMillionTokens(3.0, 15.0)).build()
 * val options = RunOptions(budget = Budget().withMeter("tokens.output", 20_000.0).withMeter("usd", 0.5))
 * ```
 */
public class TokenMeters private constructor(
    input: String?,
    output: String?,
    cost: String?,
    price: TokenPrice?,
) : TokenMeterSet<TokenPrice>(input, output, cost, price) {
    /** Charges [response]'s token usage through [charge] (a node's `charge`). */
    internal fun charge(response: ChatResponse, charge: (String, Double) -> Unit) {
        val usage = response.tokenUsage() ?: return
        this.charge(usage.inputTokenCount(), usage.outputTokenCount(), { it.cost(usage) }, charge)
    }

    /** A builder starting from these meters. */
    public fun toBuilder(): Builder = Builder(input, output, cost, price)

    /** Builds [TokenMeters]; starts from [DEFAULT]. */
    public class Builder internal constructor(
        input: String?,
        output: String?,
        cost: String?,
        price: TokenPrice?,
    ) : TokenMeterSet.Builder<TokenPrice, TokenMeters, Builder>(input, output, cost, price) {
        override fun create(input: String?, output: String?, cost: String?, price: TokenPrice?): TokenMeters =
            TokenMeters(input, output, cost, price)
    }

    /** The usual meters. */
    public companion object {
        /** Input tokens to `tokens.input`, output tokens to `tokens.output`, no cost. */
        @JvmField
        public val DEFAULT: TokenMeters = TokenMeters("tokens.input", "tokens.output", null, null)

        /** Charges nothing. */
        @JvmField
        public val NONE: TokenMeters = TokenMeters(null, null, null, null)

        /** A builder starting from [DEFAULT]. */
        @JvmStatic
        public fun builder(): Builder = DEFAULT.toBuilder()
    }
}

/** Calls [model] on the IO pool (interrupted when cancelled) and charges the response's tokens to [meters]. */
internal suspend fun NodeScope.chatMetered(model: ChatModel, request: ChatRequest, meters: TokenMeters): ChatResponse =
    model.chatSuspending(request).also { response -> meters.charge(response, ::charge) }
