package dev.trellis.graph

/**
 * Marks the graph builds of the Java facade, so that the build's error messages name the calls a Java user makes
 * (`builder.node("fetch", ctx -> …)`) instead of the Kotlin DSL's (`node("fetch") { }`). It changes nothing else;
 * the runtime's counterpart for runs is `dev.trellis.runtime.JavaCaller`.
 */
@InternalTrellisApi
public object JavaBuild {
    private val active = ThreadLocal<Boolean>()

    /** Whether the calling thread is building a graph for the Java facade. */
    internal val isActive: Boolean get() = active.get() == true

    /** Runs [build] (a graph build on this thread) as a build from Java. */
    public fun <T> run(build: () -> T): T {
        val before = active.get()
        active.set(true)
        try {
            return build()
        } finally {
            if (before == null) active.remove() else active.set(before)
        }
    }
}
