"""Running one tool call of a step: ``tool/call``, execute, ``tool/result``.

The loop's step 14 (`reqfold.reference.loop.agent.AgentLoop.run_step`) runs a step's
calls one after another through `run_tool`, so a call and its result stay
adjacent on the surface (the result's ``sourceEventSeqs`` is the call's
seq). `execute_tool` never fails the turn: an unknown tool, an exception,
a CancelledError the tool raised itself, or content that cannot be logged
becomes an error result (``isError: true``). Only the cancellation of the
task running the turn propagates.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

from reqfold.reference.errors import NotJsonValue
from reqfold.reference.json_values import JsonObject, escape_lone_surrogates
from reqfold.reference.loop.abort import AbortSignal, task_cancelled
from reqfold.reference.loop.contexts import (
    Hooks,
    LoopHandle,
    PostExecuteContext,
    ToolContext,
)
from reqfold.reference.loop.tools import Content, Tool, ToolResult, content_blocks


async def run_tool(
    loop: LoopHandle,
    hooks: Hooks,
    tools: Mapping[str, Tool],
    *,
    turn: int,
    step: int,
    call: JsonObject,
    signal: AbortSignal,
) -> list[Content]:
    """Log the call, run the tool, log its result, then the post-execute hook.

    Returns the extra context the post-execute listeners gave (the loop
    logs it after all the step's results).
    """
    call_id, name, arguments = call["id"], call["name"], call["arguments"]
    logged = loop.append(
        "tool/call",
        {
            "turn": turn,
            "step": step,
            "callId": call_id,
            "name": name,
            "arguments": arguments,
        },
    )
    context = ToolContext(
        loop=loop,
        turn=turn,
        step=step,
        call_id=call_id,
        name=name,
        arguments=arguments,
        signal=signal,
    )
    result, blocks = await execute_tool(tools, context)
    loop.append(
        "tool/result",
        {
            "turn": turn,
            "step": step,
            "callId": call_id,
            "content": blocks,
            "isError": result.is_error,
        },
        surface_op="append",
        source_event_seqs=[logged["seq"]],
    )
    outcomes = await hooks.post_execute.dispatch(
        PostExecuteContext(call=context, result=result)
    )
    return [outcome for outcome in outcomes if outcome]


async def execute_tool(
    tools: Mapping[str, Tool], context: ToolContext
) -> tuple[ToolResult, list[JsonObject]]:
    """Run the called tool; return its result and the content blocks to log."""
    name = escape_lone_surrogates(context.name)
    tool = tools.get(context.name)
    if tool is None:
        failed = ToolResult(content=f"unknown tool {name!r}", is_error=True)
        return failed, content_blocks(failed.content)
    try:
        arguments = json.loads(context.arguments) if context.arguments else {}
        output = await tool.execute(arguments, context)
    except asyncio.CancelledError:
        if task_cancelled():
            raise
        failed = ToolResult(content=f"{name} was cancelled", is_error=True)
    except Exception as error:
        message = escape_lone_surrogates(f"{name} failed: {error}")
        failed = ToolResult(content=message, is_error=True)
    else:
        result = (
            output if isinstance(output, ToolResult) else ToolResult(content=output)
        )
        try:
            return result, content_blocks(result.content)
        except (TypeError, NotJsonValue) as error:
            failed = ToolResult(
                content=f"{name} returned content that cannot be logged: {error}",
                is_error=True,
            )
    return failed, content_blocks(failed.content)
