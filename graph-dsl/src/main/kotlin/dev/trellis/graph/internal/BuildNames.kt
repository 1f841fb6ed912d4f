package dev.trellis.graph.internal

import dev.trellis.graph.JavaBuild

/**
 * The declarations that build errors suggest, in the caller's language: the Kotlin DSL's, or the Java facade's when
 * the build runs for it ([JavaBuild]).
 */
internal object BuildNames {
    private val java: Boolean get() = JavaBuild.isActive

    /** How node [id] is declared. */
    fun node(id: String): String = if (java) "builder.node(\"$id\", ctx -> …)" else "node(\"$id\") { }"

    /** How a node is given a retry policy. */
    val retry: String get() = if (java) "NodeOptions.retry(Retry.fixed(...))" else "retry = Retry.fixed(...)"

    /** How a map node collects the failures of its tasks. */
    val collectErrors: String
        get() = if (java) "MapOptions.withTaskFailure(TaskFailure.COLLECT)" else "onTaskFailure = TaskFailure.COLLECT"
}
