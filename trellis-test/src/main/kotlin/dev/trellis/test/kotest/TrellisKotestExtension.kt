package dev.trellis.test.kotest

import dev.trellis.test.context.StoreKind
import dev.trellis.test.context.TrellisTestContext
import dev.trellis.test.internal.TimelineFiles
import io.kotest.core.extensions.TestCaseExtension
import io.kotest.core.test.TestCase
import io.kotest.engine.test.TestResult
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.withContext
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * The kotest counterpart of `TrellisExtension`: each test gets a fresh `TrellisTestContext` with a store of kind
 * [store] (read it with [trellis] inside the test, or [context]), removed after the test; a failing test's runs are
 * written as timeline pages (`target/trellis-timelines/<spec>/<test>.html`) and their paths printed.
 *
 * ```kotlin
 * class SupportSpec : FunSpec({
 *     extension(TrellisKotestExtension())
 *     test("answers") { trellis().run(supportGraph, input).status shouldBe Status.COMPLETED }
 * })
 * ```
 */
public class TrellisKotestExtension(private val store: StoreKind = StoreKind.MEMORY) : TestCaseExtension {
    @Volatile
    private var current: TrellisTestContext? = null

    /** The context of the test running now (tests of a spec run one at a time by default). */
    public val context: TrellisTestContext
        get() = current ?: throw IllegalStateException(
            "No Trellis test is running: read the context inside a test of a spec that registered this extension.",
        )

    override suspend fun intercept(testCase: TestCase, execute: suspend (TestCase) -> TestResult): TestResult {
        val trellis = TrellisTestContext.open(store)
        current = trellis
        try {
            val result = withContext(Element(trellis)) { execute(testCase) }
            if (result.isErrorOrFailure && trellis.runs.isNotEmpty()) {
                val directory = TimelineFiles.directory().resolve(testCase.spec::class.java.name)
                for (file in trellis.writeTimelines(directory, TimelineFiles.safeName(testCase.name.name))) {
                    System.err.println("Trellis: the timeline of the failed test '${testCase.name.name}' is $file")
                }
            }
            return result
        } finally {
            current = null
            trellis.close()
        }
    }

    internal class Element(val context: TrellisTestContext) : AbstractCoroutineContextElement(Key) {
        companion object Key : CoroutineContext.Key<Element>
    }
}

/** The `TrellisTestContext` of the kotest test running in this coroutine (see [TrellisKotestExtension]). */
public suspend fun trellis(): TrellisTestContext =
    currentCoroutineContext()[TrellisKotestExtension.Element]?.context ?: throw IllegalStateException(
        "No Trellis test context in this coroutine: register TrellisKotestExtension on the spec " +
            "(extension(TrellisKotestExtension())) and call trellis() inside a test.",
    )
