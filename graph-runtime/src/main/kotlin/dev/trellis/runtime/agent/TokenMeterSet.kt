package dev.trellis.runtime.agent

import dev.trellis.graph.InternalTrellisApi

/**
 * Which budget meters (`docs/semantics.md` §13.4) a model call charges from the tokens it used: the input tokens to
 * meter [input], the output tokens to meter [output] (give both the same name for a single meter of all tokens), and,
 * with a price [P], the call's cost to meter [cost]. A null meter name is not charged.
 *
 * The one implementation of the model adapters' `TokenMeters` (`trellis-langchain4j`, `trellis-spring-ai`), whose
 * price [P] reads their model client's token usage; use those.
 */
public abstract class TokenMeterSet<P : Any> protected constructor(
    /** The meter charged with the input (prompt) tokens, or null. */
    public val input: String?,
    /** The meter charged with the output (completion) tokens, or null. */
    public val output: String?,
    /** The meter charged with the cost of the call, or null. */
    public val cost: String?,
    /** The price of a call, or null. */
    protected val price: P?,
) {
    /**
     * Charges a call that used [inputTokens] and [outputTokens] (null: not reported, not charged) through [charge] (a
     * node's `charge`), and its cost, [costOf] the price, when there is a cost meter and a price.
     */
    @InternalTrellisApi
    public fun charge(inputTokens: Int?, outputTokens: Int?, costOf: (P) -> Double, charge: (String, Double) -> Unit) {
        if (input != null && inputTokens != null) charge(input, inputTokens.toDouble())
        if (output != null && outputTokens != null) charge(output, outputTokens.toDouble())
        if (cost != null && price != null) charge(cost, costOf(price))
    }

    override fun toString(): String = "TokenMeters(input=$input, output=$output, cost=$cost)"

    /** Builds the meters [T] of price [P]; [B] is the builder itself. */
    public abstract class Builder<P : Any, T, B : Builder<P, T, B>> protected constructor(
        private var input: String?,
        private var output: String?,
        private var cost: String?,
        private var price: P?,
    ) {
        /** The meter of input tokens (null: not charged). */
        public fun input(meter: String?): B = self { input = checked(meter) }

        /** The meter of output tokens (null: not charged). */
        public fun output(meter: String?): B = self { output = checked(meter) }

        /** One meter for all tokens, input and output. */
        public fun tokens(meter: String): B = self {
            input = checked(meter)
            output = meter
        }

        /** Charges the cost of each call, by [price], to [meter]. */
        public fun cost(meter: String, price: P): B = self {
            cost = checked(meter)
            this.price = price
        }

        /** The meters. */
        public fun build(): T = create(input, output, cost, price)

        /** The meters of these names and price. */
        protected abstract fun create(input: String?, output: String?, cost: String?, price: P?): T

        @Suppress("UNCHECKED_CAST")
        private inline fun self(change: () -> Unit): B {
            change()
            return this as B
        }

        private fun checked(meter: String?): String? = meter.also {
            require(it == null || it.isNotBlank()) { "A meter name must not be blank; pass null to charge nothing." }
        }
    }
}

/** The cost of [inputTokens] and [outputTokens] (null: 0) at [input] and [output] per million tokens. */
@InternalTrellisApi
public fun costPerMillionTokens(inputTokens: Int?, outputTokens: Int?, input: Double, output: Double): Double =
    ((inputTokens ?: 0) * input + (outputTokens ?: 0) * output) / 1_000_000.0
