package dev.trellis.springai

import org.springframework.ai.chat.metadata.EmptyUsage
import org.springframework.ai.chat.metadata.Usage
import org.springframework.ai.chat.model.ChatResponse

/**
 * The price of a model call, from the tokens it used, in the unit of the cost meter (dollars, euros, credits).
 *
 * ```kotlin
 * val price = TokenPrice.perMillionTokens(input = 3.0, output = 15.0)
 * ```
 */
public fun interface TokenPrice {
    /** The cost of a call that used [usage]; finite and not negative. */
    public fun cost(usage: Usage): Double

    /** Makes prices. */
    public companion object {
        /** A price per million input (prompt) tokens, [input], and per million output (completion) tokens, [output]. */
        @JvmStatic
        public fun perMillionTokens(input: Double, output: Double): TokenPrice = TokenPrice { usage ->
            (tokens(usage.promptTokens) * input + tokens(usage.completionTokens) * output) / 1_000_000.0
        }
    }
}

/**
 * Which budget meters (`docs/semantics.md` §13.4) a model call charges, from the [Usage] of its response: the prompt
 * tokens to meter [input], the completion tokens to meter [output] (give both the same name for a single meter of
 * all tokens), and, with a [TokenPrice], the call's cost to meter [cost]. A null meter name is not charged.
 *
 * Every node of this module that calls a model charges its [DEFAULT] meters unless given others: `tokens.input` and
 * `tokens.output`, the meters of `trellis-langchain4j`'s nodes. A response without usage (Spring AI's `EmptyUsage`,
 * or a count that is null) charges nothing for it. A `Budget` with a limit on one of these meters stops the run
 * when it is exceeded (`LimitExceededException`).
 *
 * ```kotlin
 * val meters = TokenMeters.builder().cost("usd", TokenPrice.perMillionTokens(3.0, 15.0)).build()
 * val options = RunOptions(budget = Budget().withMeter("tokens.output", 20_000.0).withMeter("usd", 0.5))
 * ```
 */
public class TokenMeters private constructor(
    /** The meter charged with the input (prompt) tokens, or null. */
    public val input: String?,
    /** The meter charged with the output (completion) tokens, or null. */
    public val output: String?,
    /** The meter charged with the cost of the call, or null. */
    public val cost: String?,
    private val price: TokenPrice?,
) {
    /** Charges [response]'s usage through [charge] (a node's `charge`). */
    internal fun charge(response: ChatResponse, charge: (String, Double) -> Unit) {
        charge(response.metadata.usage, charge)
    }

    /** Charges [usage] through [charge]; an absent or empty usage charges nothing. */
    internal fun charge(usage: Usage?, charge: (String, Double) -> Unit) {
        if (usage == null || usage is EmptyUsage) return
        if (input != null && counted(usage.promptTokens)) charge(input, tokens(usage.promptTokens))
        if (output != null && counted(usage.completionTokens)) charge(output, tokens(usage.completionTokens))
        if (cost != null && price != null) charge(cost, price.cost(usage))
    }

    /** A builder starting from these meters. */
    public fun toBuilder(): Builder = Builder(input, output, cost, price)

    override fun toString(): String = "TokenMeters(input=$input, output=$output, cost=$cost)"

    /** Builds [TokenMeters]; starts from [DEFAULT]. */
    public class Builder internal constructor(
        private var input: String?,
        private var output: String?,
        private var cost: String?,
        private var price: TokenPrice?,
    ) {
        /** The meter of input tokens (null: not charged). */
        public fun input(meter: String?): Builder = apply { input = checked(meter) }

        /** The meter of output tokens (null: not charged). */
        public fun output(meter: String?): Builder = apply { output = checked(meter) }

        /** One meter for all tokens, input and output. */
        public fun tokens(meter: String): Builder = apply {
            input = checked(meter)
            output = meter
        }

        /** Charges the cost of each call, by [price], to [meter]. */
        public fun cost(meter: String, price: TokenPrice): Builder = apply {
            cost = checked(meter)
            this.price = price
        }

        /** The meters. */
        public fun build(): TokenMeters = TokenMeters(input, output, cost, price)

        private fun checked(meter: String?): String? = meter.also {
            require(it == null || it.isNotBlank()) { "A meter name must not be blank; pass null to charge nothing." }
        }
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

/** Whether a usage reports [count] (some models leave a count out, whatever the types say). */
private fun counted(count: Int?): Boolean = count != null

/** [count] as an amount; an absent count is 0. */
private fun tokens(count: Int?): Double = count?.toDouble() ?: 0.0
