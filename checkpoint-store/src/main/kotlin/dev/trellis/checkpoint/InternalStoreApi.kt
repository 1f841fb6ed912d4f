package dev.trellis.checkpoint

/**
 * Marks the store rules and SQL engine that the Trellis checkpoint store modules share with each other; they are not
 * part of the user-facing API.
 *
 * They may change or disappear in any release. Application code should not opt in. (The store modules do not depend
 * on the graph model, so they have this marker of their own beside `dev.trellis.graph.InternalTrellisApi`.)
 */
@RequiresOptIn(
    message = "This is an internal API shared between the Trellis checkpoint store modules; " +
        "it may change without notice.",
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
public annotation class InternalStoreApi
