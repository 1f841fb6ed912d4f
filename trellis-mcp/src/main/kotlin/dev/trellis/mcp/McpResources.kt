package dev.trellis.mcp

/** A resource an MCP server lists ([McpTools.resources]): read its text with [McpTools.readResource]. */
public class McpResource(
    /** Its address, such as `file:///docs/guide.md`. */
    public val uri: String,
    /** Its name. */
    public val name: String,
    /** What it holds, when the server says. */
    public val description: String?,
    /** Its media type, when the server says. */
    public val mimeType: String?,
) {
    override fun toString(): String = "McpResource($uri, $name)"
}

/** A prompt an MCP server lists ([McpTools.prompts]): get its messages with [McpTools.prompt]. */
public class McpPrompt(
    /** Its name. */
    public val name: String,
    /** What it is for, when the server says. */
    public val description: String?,
    /** The arguments it takes. */
    public val arguments: List<McpPromptArgument>,
) {
    override fun toString(): String = "McpPrompt($name, $arguments)"
}

/** An argument of an [McpPrompt]. */
public class McpPromptArgument(
    /** Its name. */
    public val name: String,
    /** What to give, when the server says. */
    public val description: String?,
    /** Whether the prompt needs it. */
    public val required: Boolean,
) {
    override fun toString(): String = if (required) name else "$name?"
}
