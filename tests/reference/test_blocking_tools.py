"""A scripted tool result ``{"do": "block"}``: the call reports
``tool/started`` and blocks until its turn is cancelled or disposed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reqfold.reference.loop import AbortSignal
from reqfold.reference.loop.contexts import ToolContext
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_params import (
    BLOCK,
    ToolBlocked,
    ToolScript,
    tool_specs_param,
)


def spec(*results: Any) -> dict[str, Any]:
    return {
        "name": "lookup",
        "description": "d",
        "parameters": {"type": "object"},
        "results": list(results),
    }


def test_a_tool_result_is_a_text_or_a_block_and_nothing_else() -> None:
    [tool] = tool_specs_param({"tools": [spec("a", {"do": "block"})]})
    assert tool["results"] == ["a", BLOCK]
    with pytest.raises(RpcError, match="results"):
        tool_specs_param({"tools": [spec({"do": "wait"})]})
    with pytest.raises(RpcError, match="results"):
        tool_specs_param({"tools": [spec(1)]})


def test_a_blocking_call_reports_its_start_and_ends_with_the_turns_abort() -> None:
    started: list[tuple[str, int]] = []
    blocking = asyncio.Event()

    def report(tool_name: str, call: int) -> None:
        started.append((tool_name, call))
        blocking.set()

    script = ToolScript(started=report)
    [tool] = script.load([spec("first", BLOCK, "after")])
    signal = AbortSignal()
    context = ToolContext(
        loop=None,  # type: ignore[arg-type]
        turn=1,
        step=1,
        call_id="c1",
        name="lookup",
        arguments="{}",
        signal=signal,
    )

    async def play() -> list[Any]:
        first = await tool.execute({}, context)
        blocked = asyncio.ensure_future(tool.execute({}, context))
        await blocking.wait()  # it reported its start, and now waits
        assert started == [("lookup", 2)]
        assert not blocked.done()
        signal.abort("user pressed escape")
        with pytest.raises(ToolBlocked):
            await blocked
        return [first, await tool.execute({}, context)]

    assert asyncio.run(play()) == ["first", "after"]
