package dev.trellis.test.eval

/** The HTML page of an [EvalReport]. */
internal object ReportHtml {
    fun render(report: EvalReport): String = buildString {
        append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Eval ").append(esc(report.name))
        append("</title><style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}")
        append("td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}.pass{color:#176b2c}")
        append(".fail{color:#b00020;font-weight:bold}iframe{width:100%;height:480px;border:1px solid #ccc}")
        append("pre{white-space:pre-wrap;max-width:60em}</style></head><body>")
        append("<h1>Eval ").append(esc(report.name)).append("</h1><p>")
        append(report.cases.count { it.passed }).append('/').append(report.cases.size).append(" passed (")
        append(EvalReport.percent(report.passRate)).append("), mean score ").append("%.2f".format(report.meanScore))
        append(", cost ").append("%.1f".format(report.cost)).append("</p><table><tr><th>case</th><th>result</th>")
        append("<th>score</th><th>why</th></tr>")
        for (c in report.cases) {
            val css = if (c.passed) "pass" else "fail"
            append("<tr><td><a href=\"#case-").append(esc(c.id)).append("\">").append(esc(c.id)).append("</a></td>")
            append("<td class=\"").append(css).append("\">").append(
                if (c.skipped) {
                    "SKIP"
                } else if (c.passed) {
                    "pass"
                } else {
                    "FAIL"
                },
            )
            append("</td><td>").append("%.2f".format(c.score)).append("</td><td>")
            append(if (c.passed) "" else esc(EvalReport.why(c))).append("</td></tr>")
        }
        append("</table>")
        for (c in report.cases) {
            append("<h2 id=\"case-").append(esc(c.id)).append("\">").append(esc(c.id)).append("</h2><ul>")
            for ((name, score) in c.scores) {
                append(
                    "<li>",
                ).append(esc(name)).append(": ").append(esc(score.toString())).append("</li>")
            }
            append("</ul><pre>").append(esc(c.output)).append("</pre>")
            c.timelineHtml?.let {
                append(
                    "<details><summary>timeline</summary><iframe srcdoc=\"",
                ).append(esc(it)).append("\"></iframe></details>")
            }
        }
        append("</body></html>\n")
    }

    private fun esc(text: String): String =
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;")
}
