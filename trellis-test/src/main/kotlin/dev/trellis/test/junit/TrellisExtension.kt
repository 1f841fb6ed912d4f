package dev.trellis.test.junit

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.test.context.StoreKind
import dev.trellis.test.context.TrellisTestContext
import dev.trellis.test.internal.TimelineFiles
import org.junit.jupiter.api.MediaType
import org.junit.jupiter.api.extension.AfterEachCallback
import org.junit.jupiter.api.extension.AfterTestExecutionCallback
import org.junit.jupiter.api.extension.ExtensionContext
import org.junit.jupiter.api.extension.ParameterContext
import org.junit.jupiter.api.extension.ParameterResolver
import org.junit.platform.commons.support.AnnotationSupport
import java.nio.file.Files

/**
 * The JUnit 5 extension of Trellis tests (`@TrellisTest`, or `@ExtendWith(TrellisExtension::class)`): each test
 * gets a fresh `TrellisTestContext` (a parameter of that type, or a `CheckpointStore` parameter for the store
 * alone) whose store is removed after the test. When the test fails, the timeline page of each run of the context
 * is written next to the test reports (`target/trellis-timelines/<class>/<test>.html`, or the directory of the
 * system property `trellis.timelines.dir`), its path printed and published as a file entry of the test's report.
 */
public class TrellisExtension : ParameterResolver, AfterTestExecutionCallback, AfterEachCallback {
    override fun supportsParameter(parameterContext: ParameterContext, extensionContext: ExtensionContext): Boolean {
        val type = parameterContext.parameter.type
        return type == TrellisTestContext::class.java || type == CheckpointStore::class.java
    }

    override fun resolveParameter(parameterContext: ParameterContext, extensionContext: ExtensionContext): Any {
        val context = contextOf(extensionContext)
        return if (parameterContext.parameter.type == CheckpointStore::class.java) context.store else context
    }

    override fun afterTestExecution(context: ExtensionContext) {
        if (!context.executionException.isPresent) return
        val trellis = existing(context) ?: return
        if (trellis.runs.isEmpty()) return
        val directory = TimelineFiles.directory().resolve(context.requiredTestClass.name)
        val files = trellis.writeTimelines(directory, TimelineFiles.safeName(context.displayName))
        for (file in files) {
            System.err.println("Trellis: the timeline of the failed test '${context.displayName}' is $file")
            context.publishReportEntry("trellis.timeline", file.toAbsolutePath().toString())
            try {
                context.publishFile(file.fileName.toString(), HTML) { target -> Files.copy(file, target) }
            } catch (_: NoSuchMethodError) {
                // JUnit before 5.12 has no file entries: the report entry and the printed path remain.
            }
        }
    }

    override fun afterEach(context: ExtensionContext) {
        existing(context)?.close()
    }

    private fun existing(context: ExtensionContext): TrellisTestContext? =
        context.getStore(NAMESPACE).get(KEY, TrellisTestContext::class.java)

    private fun contextOf(context: ExtensionContext): TrellisTestContext =
        context.getStore(NAMESPACE).getOrComputeIfAbsent(
            KEY,
            { TrellisTestContext.open(kindOf(context)) },
            TrellisTestContext::class.java,
        )

    private fun kindOf(context: ExtensionContext): StoreKind {
        val method = context.testMethod.flatMap { AnnotationSupport.findAnnotation(it, TrellisTest::class.java) }
        val type = context.testClass.flatMap { AnnotationSupport.findAnnotation(it, TrellisTest::class.java) }
        return (method.or { type }).map { it.store }.orElse(StoreKind.MEMORY)
    }

    private companion object {
        val NAMESPACE: ExtensionContext.Namespace = ExtensionContext.Namespace.create(TrellisExtension::class.java)
        const val KEY = "context"
        val HTML: MediaType = MediaType.create("text", "html", Charsets.UTF_8)
    }
}
