package dev.trellis.graph

/** Graphs written in Kotlin, handed to the Java tests (as Java users will receive them). */
object JavaFixtures {
    /** The research example graph of [DslExampleTest]. */
    @JvmStatic
    fun research(): Graph = research
}
