/*
 * Package dev.trellis.graph — describing graphs: the public DSL (`docs/semantics.md` §1–5, §11–13).
 *
 * Owns, by concept (the files of one public package; the package does not change with them):
 * - **Model**: state and its keys (`StateSchema.kt`, `StateKey.kt`, `State.kt`, `Reducer.kt`), nodes and what their
 *   bodies see (`Node.kt`, `NodeScope.kt`, `NodeWrites.kt`, `NodeError.kt`), the built graph and its report
 *   (`Graph.kt`, `GraphReport.kt`).
 * - **Building**: the builder and its one validation (`GraphBuilder.kt`, `GraphValidationException.kt`), routing rules
 *   (`FirstMatchBuilder.kt`), graph-wide configuration (`GraphConfig.kt`).
 * - **Policies**: retry (`Retry.kt`), interceptors (`NodeInterceptor.kt`), the node cache (`CachePolicy.kt`),
 *   compensation (`Compensation.kt`), state slices and their build-time check (`NodeSlice.kt`, `ParallelWrites.kt`).
 * - **Composition**: subgraph and map nodes (`Composite.kt`, `Mapping.kt`).
 * - **The runtime's view** (`@InternalTrellisApi`, public for the runtime module only): the compiled graph
 *   (`Topology.kt`) and its input channels (`InputChannels.kt`), the mark itself in `InternalTrellisApi.kt`.
 *
 * Declarations that are not API live in `dev.trellis.graph.internal`. May call: kotlinx.serialization (keys'
 * serializers); nothing of the runtime.
 */
package dev.trellis.graph
