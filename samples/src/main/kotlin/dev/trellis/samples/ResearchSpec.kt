package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.spec.GraphSpec
import dev.trellis.graph.spec.HandlerRegistry
import dev.trellis.graph.spec.handlerRegistry
import java.io.IOException
import java.nio.file.Path

/**
 * The research sample as data: `research.yaml` (in this module's resources) names the handlers registered here, and
 * `./trellis-samples research --spec FILE` runs it (docs/graph-spec.md).
 *
 * The node bodies are those of the Kotlin graph ([ResearchSample.graph]), registered under their node ids: the chat
 * nodes of trellis-langchain4j build their bodies from the models of `--model`, so the registry takes them from the
 * graph those helpers declared. Routing after the review is a declarative rule in the spec itself.
 */
internal object ResearchSpec {
    /** The class path resource of the sample's spec. */
    const val RESOURCE: String = "/dev/trellis/samples/research.yaml"

    /** The handlers `research.yaml` names, for a run with [tools] and [models]. */
    fun registry(tools: ResearchSample.Tools, models: ResearchModels): HandlerRegistry {
        val kotlin = ResearchSample.graph(tools, models)
        return handlerRegistry {
            schema(Research)
            for (node in kotlin.nodes) node(node.id, node.body)
            interceptor("costMeter", tools.meter)
            retryOn("ioErrors") { it is IOException }
        }
    }

    /** The graph of the spec file [path]. */
    fun load(path: Path, tools: ResearchSample.Tools, models: ResearchModels): Graph =
        GraphSpec.load(path, registry(tools, models))

    /** The text of the sample's own spec. */
    fun text(): String = ResearchSpec::class.java.getResource(RESOURCE)!!.readText()
}
