package dev.trellis.graph.spec

/**
 * Brings a spec written in an older format to the current one ([GraphSpec.FORMAT]) before it is read, so that a spec
 * stored once keeps loading. Each step rewrites the document tree; values keep their place in the text, so problems
 * are still reported where the author wrote them.
 *
 * Format 0 (the preview format) held one graph at the top level (`id`, `state`, `start`, `nodes`, `edges`, `config`)
 * and named an edge's condition `condition`; format 1 holds `graphs` by id (so that subgraphs can be referenced), a
 * `main` graph, and calls the condition `when` (a name or a declarative rule).
 */
internal object SpecMigrations {
    fun migrate(root: SpecValue, reader: SpecReader): SpecValue? {
        if (root !is SpecValue.Obj) {
            reader.report(root, "A spec must be a mapping with format and graphs, but is ${root.what}.")
            return null
        }
        val formatValue = root["format"] ?: run {
            reader.report(root, "The spec does not declare its format; add `format: ${GraphSpec.FORMAT}` at the top.")
            return null
        }
        val format = reader.int(formatValue, "format", min = 0) ?: return null
        return when {
            format > GraphSpec.FORMAT -> {
                reader.report(
                    formatValue,
                    "The spec has format $format, newer than this version of Trellis reads " +
                        "(${GraphSpec.FORMAT}); upgrade Trellis, or export the graph with this version.",
                )
                null
            }
            format == 0 -> from0(root, reader)
            else -> root
        }
    }

    private fun from0(root: SpecValue.Obj, reader: SpecReader): SpecValue? {
        val id = root["id"] as? SpecValue.Str ?: run {
            reader.report(
                root,
                "A format 0 spec names its graph with `id`; add it (or write format 1, see " +
                    "docs/graph-spec.md).",
            )
            return null
        }
        val graph = SpecValue.Obj(root.pointer, root.line, root.column)
        for ((key, value) in root.entries) {
            when (key.text) {
                "format", "id" -> Unit
                "edges" -> graph.entries += key to renameConditions(value)
                else -> graph.entries += key to value
            }
        }
        val graphs = SpecValue.Obj(root.pointer, root.line, root.column).apply { entries += id to graph }
        return SpecValue.Obj(root.pointer, root.line, root.column).apply {
            entries += synthetic(root, "format") to synthetic(root, GraphSpec.FORMAT.toString(), SpecValue.Kind.INT)
            entries += synthetic(root, "main") to id
            entries += synthetic(root, "graphs") to graphs
        }
    }

    private fun renameConditions(edges: SpecValue): SpecValue {
        if (edges !is SpecValue.Arr) return edges
        val result = SpecValue.Arr(edges.pointer, edges.line, edges.column)
        for (edge in edges.items) {
            if (edge !is SpecValue.Obj) {
                result.items += edge
                continue
            }
            val renamed = SpecValue.Obj(edge.pointer, edge.line, edge.column)
            for ((key, value) in edge.entries) {
                val name = if (key.text ==
                    "condition"
                ) {
                    SpecValue.Str(key.pointer, key.line, key.column, "when", key.kind)
                } else {
                    key
                }
                renamed.entries += name to value
            }
            result.items += renamed
        }
        return result
    }

    private fun synthetic(at: SpecValue, text: String, kind: SpecValue.Kind = SpecValue.Kind.STRING): SpecValue.Str =
        SpecValue.Str(at.pointer, at.line, at.column, text, kind)
}
