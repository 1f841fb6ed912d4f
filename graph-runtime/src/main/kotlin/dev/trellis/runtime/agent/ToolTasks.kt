package dev.trellis.runtime.agent

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible
import kotlin.time.Duration

/*
 * Tool calls as map tasks, the one implementation of the model adapters' tool nodes (`trellis-langchain4j`,
 * `trellis-spring-ai`): each adapter keeps only its tool and message types.
 */

/**
 * Declares a tool node [id]: a map node (`docs/semantics.md` §11) over [toolCalls] whose task [run] runs one call and
 * returns its result message, appended to [conversation] in the order of the calls. For model adapters.
 */
@InternalTrellisApi
public fun <C, M> GraphBuilder.toolTasks(
    id: String,
    toolCalls: StateKey<List<C>>,
    conversation: StateKey<List<M>>,
    maxConcurrency: Int,
    timeout: Duration?,
    retry: Retry?,
    description: String,
    run: suspend NodeScope.(C) -> M,
): NodeRef = map(
    id,
    over = toolCalls,
    maxConcurrency = maxConcurrency,
    timeout = timeout,
    retry = retry,
    description = description,
) { call -> set(conversation, listOf(run(call))) }

/**
 * Runs tool [name] with [arguments] in the task of tool node [node] and returns what the model is told: a tool that
 * [requiresApproval] first interrupts with [toolApprovalQuestion] and, unless answered `yes`, is skipped with a
 * refusal; otherwise an `AgentEvent.Step(node, "name(arguments)")` is emitted and [execute] runs on the IO pool,
 * interrupted when cancelled. For model adapters.
 */
@InternalTrellisApi
public suspend fun NodeScope.runTool(
    node: String,
    name: String,
    arguments: String,
    requiresApproval: Boolean,
    execute: () -> String,
): String {
    if (requiresApproval) {
        val answer = interrupt(toolApprovalQuestion(name, arguments))
        if (!answer.trim().equals("yes", ignoreCase = true)) {
            return "The user did not allow this call (answer: $answer)."
        }
    }
    emit(AgentEvent.Step(node, "$name($arguments)"))
    return runInterruptible(Dispatchers.IO) { execute() }
}

/** The question a tool [name] that requires approval asks before it runs with [arguments]; answer `yes` to run it. */
@InternalTrellisApi
public fun toolApprovalQuestion(name: String, arguments: String): String = "Run tool $name with $arguments? (yes/no)"
