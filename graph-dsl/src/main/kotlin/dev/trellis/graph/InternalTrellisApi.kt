package dev.trellis.graph

/**
 * Marks declarations that Trellis modules share with each other but that are not part of the user-facing API.
 *
 * They may change or disappear in any release. Application code should not opt in.
 */
@RequiresOptIn(
    message = "This is an internal Trellis API shared between Trellis modules; it may change without notice.",
    level = RequiresOptIn.Level.ERROR,
)
@Retention(AnnotationRetention.BINARY)
@Target(
    AnnotationTarget.CLASS,
    AnnotationTarget.FUNCTION,
    AnnotationTarget.PROPERTY,
    AnnotationTarget.CONSTRUCTOR,
    AnnotationTarget.TYPEALIAS,
)
public annotation class InternalTrellisApi

/**
 * The DSL marker of Trellis builders: inside a nested block only the nearest Trellis receiver is implicit,
 * so a node body cannot call the graph builder by accident.
 */
@DslMarker
public annotation class TrellisDsl
