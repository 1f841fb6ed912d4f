/*
 * Package dev.trellis.graph.spec — graphs as data (`docs/graph-spec.md`): the versioned YAML/JSON spec and its JSON
 * Schema (`GraphSpec.kt`), the handler registry that names node bodies, conditions, reducers and codecs
 * (`HandlerRegistry.kt`), reading a document with every position kept (`SpecReader.kt`, `SpecTree.kt`), loading it
 * into a `Graph` with every problem located (`GraphLoader.kt`, `GraphContext.kt`, `StateLoader.kt`, `SpecTypes.kt`,
 * `NodeLoader.kt`, `EdgeLoader.kt`, `Rules.kt`, `SpecProblem.kt`), older formats (`SpecMigrations.kt`) and export of a
 * built graph (`SpecExport.kt`). Loading never loads a class by name.
 *
 * May call: graph-dsl's public API (and its `@InternalTrellisApi` mapping accessors), snakeyaml-engine.
 */
package dev.trellis.graph.spec
