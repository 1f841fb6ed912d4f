package dev.trellis.test.junit

import dev.trellis.test.context.StoreKind
import org.junit.jupiter.api.extension.ExtendWith

/**
 * Marks a JUnit 5 test class (or method) as a test of Trellis graphs: [TrellisExtension] gives each test a
 * `TrellisTestContext` parameter with a fresh store of kind [store], and writes the timeline page of its runs when
 * it fails.
 *
 * ```kotlin
 * @TrellisTest(store = StoreKind.SQLITE)
 * class OrderGraphTest {
 *     @Test fun ships(trellis: TrellisTestContext) { ... }
 * }
 * ```
 */
@Target(AnnotationTarget.CLASS, AnnotationTarget.FUNCTION)
@Retention(AnnotationRetention.RUNTIME)
@MustBeDocumented
@ExtendWith(TrellisExtension::class)
public annotation class TrellisTest(
    /** The store each test gets. */
    val store: StoreKind = StoreKind.MEMORY,
)
