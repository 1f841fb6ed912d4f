/*
 * Package dev.trellis.graph.internal — what the DSL's public classes use and users never see: the build-time error
 * routes (`FailureRoutes.kt`), the declarations build errors suggest in the caller's language (`BuildNames.kt`), the
 * check that a key's type can be checkpointed (`Checkpointable.kt`), the checkpoint form of node and task errors
 * (`ErrorSerializers.kt`), the list the append reducer returns
 * (`AppendList.kt`) and the Mermaid drawing of a graph (`Mermaid.kt`).
 *
 * May call: the public `dev.trellis.graph` package; it is called only from there.
 */
package dev.trellis.graph.internal
