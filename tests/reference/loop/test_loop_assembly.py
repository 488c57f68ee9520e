"""What a step assembles: the request config, the system prompt, the tool list.

The request waterfall's model (CONFIG-1), the system-prompt veto, and the
header's tool order (TOOLS-1, EQ-3).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from messages import types

from reqfold.reference.loop import Assembly, Tool


async def echo(arguments, context):
    return f"echo {arguments.get('say', '')}"


ECHO = Tool(name="echo", description="Echo the text back.", execute=echo)


@pytest.mark.spec("REQ-6", "WRITER-1", "CONFIG-1")
def test_the_request_waterfall_switches_models_by_returning_a_replacement_config(
    harness,
):
    harness.fake.configure(models=(*harness.fake.profile.models, "other-model"))

    async def scenario():
        loop = harness.loop()
        mutations = []

        async def switch(context, config, next):
            base = await next()
            try:
                base["model"] = "sneaky"
            except TypeError as error:
                mutations.append(error)
            return {**base, "model": "other-model"}

        loop.hooks.request.register(switch)
        await loop.send("hi")
        return loop, mutations

    loop, mutations = harness.run(scenario())
    assert len(mutations) == 1
    assert harness.fake.requests[0].json["model"] == "other-model"
    snapshot = next(e for e in loop.session if e["type"] == "request/header")
    assert snapshot["data"]["header"]["config"] == {"model": "other-model"}


@pytest.mark.spec("CONFIG-1", "REQ-2")
def test_a_loop_without_a_model_fails_the_step_with_no_header_event(harness):
    async def scenario():
        loop = harness.loop(model="")
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {
        "kind": "error",
        "step": 1,
        "message": result.error.message,
        "code": "NO_MODEL",
    }
    assert "request/header" not in types(loop.session)
    assert types(loop.session)[-2:] == ["step/end", "turn/end"]
    assert harness.fake.requests == []


@pytest.mark.spec("CONFIG-1")
def test_the_request_waterfall_can_supply_the_model_for_a_model_less_loop(harness):
    async def scenario():
        loop = harness.loop(model="")

        async def supply(context, config, next):
            return {**(await next()), "model": "deepseek-chat"}

        loop.hooks.request.register(supply)
        return await loop.send("hi")

    assert harness.run(scenario()).kind == "completed"


@pytest.mark.spec("WIRE-1", "HDR-4")
def test_a_system_prompt_veto_omits_the_system_message_entirely(harness):
    async def scenario():
        loop = harness.loop(system="You are a pirate.")

        async def veto(context, assembly, next):
            return replace(await next(), system="")

        loop.hooks.system_prompt.register(veto)
        await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert "system" not in loop.requests[0].header
    assert harness.fake.requests[0].json["messages"][0]["role"] == "user"


@pytest.mark.spec("TOOLS-1", "WIRE-3", "EQ-3")
def test_header_tools_are_in_lexicographic_order_regardless_of_registration(harness):
    async def run_tool(arguments, context):
        return ""

    tools = [
        Tool(name=n, description=n, execute=run_tool) for n in ("write", "read", "grep")
    ]

    async def scenario():
        loop = harness.loop(tools=tools)
        ordered = harness.loop(tools=tools, tool_order=["write", "grep", "read"])
        await loop.send("hi")
        await ordered.send("hi")
        return loop, ordered

    loop, ordered = harness.run(scenario())
    assert [t["name"] for t in loop.requests[0].header["tools"]] == [
        "grep",
        "read",
        "write",
    ]
    assert [t["name"] for t in ordered.requests[0].header["tools"]] == [
        "write",
        "grep",
        "read",
    ]
    wire = harness.fake.requests[0].json["tools"]
    assert [t["function"]["name"] for t in wire] == ["grep", "read", "write"]


@pytest.mark.spec("TURN-2", "WRITER-1")
def test_an_unknown_tool_in_the_order_fails_the_turn_with_no_step_and_no_header(
    harness,
):
    async def scenario():
        loop = harness.loop(tools=[ECHO], tool_order=["echo", "ghost"])
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason["code"] == "UNKNOWN_TOOL"
    assert types(loop.session) == ["turn/start", "user/message", "turn/end"]


@pytest.mark.spec("TOOLS-1")
def test_an_assembly_listener_can_change_the_tool_list(harness):
    async def scenario():
        loop = harness.loop(tools=[ECHO])

        async def drop(context, assembly, next):
            base = await next()
            return Assembly(system=base.system, tools=())

        loop.hooks.system_prompt.register(drop)
        await loop.send("hi")
        return loop

    harness.run(scenario())
    assert "tools" not in harness.fake.requests[0].json
