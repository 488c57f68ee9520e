"""Turns, steps and the step/start boundary (anchor-spec 4.2-4.4, 1.7; items 43-62).

What a turn logs and in which order, tool calls, injects and pre-step
appends. The request's config, system prompt and tools are in
test_loop_assembly.py; cancelling a turn in test_loop_cancel.py.
"""

from __future__ import annotations

import pytest
from messages import text, types

from reqfold.fakes import Reply, ToolCall
from reqfold.reference.loop import Tool, ToolResult


async def echo(arguments, context):
    return f"echo {arguments.get('say', '')}"


ECHO = Tool(name="echo", description="Echo the text back.", execute=echo)


@pytest.mark.spec("TURN-1", "TURN-2", "TURN-3", "DERIVE-1", "REQ-1")
def test_a_simple_turn_logs_its_boundary_events_in_order(harness):
    async def scenario():
        loop = harness.loop(system="Be brief.")
        result = await loop.send("hi")
        return loop, result

    loop, result = harness.run(scenario())
    assert result.kind == "completed"
    assert types(loop.session) == [
        "turn/start",
        "user/message",
        "step/start",
        "request/header",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    start, _, step_start, *_, end = loop.session.events
    assert start["data"] == {
        "turn": 1,
        "trigger": {"kind": "message", "source": {"kind": "user"}},
    }
    assert step_start["data"] == {"turn": 1, "step": 1}
    assert end["data"] == {"turn": 1, "reason": {"kind": "completed"}}


@pytest.mark.spec("TURN-1", "TURN-2", "DERIVE-2", "WIRE-2")
def test_a_tool_call_runs_in_its_step_and_the_result_joins_the_next_request(
    harness, fake
):
    fake.push(
        Reply(
            text="Checking.", tool_calls=(ToolCall.of("echo", {"say": "x"}, id="c1"),)
        ),
        Reply(text="Done."),
    )

    async def scenario():
        loop = harness.loop(tools=[ECHO])
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    assert types(loop.session)[2:] == [
        "step/start",
        "request/header",
        "assistant/message",
        "tool/call",
        "tool/result",
        "step/end",
        "step/start",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    call = next(e for e in loop.session if e["type"] == "tool/call")
    result = next(e for e in loop.session if e["type"] == "tool/result")
    assert result["sourceEventSeqs"] == [call["seq"]]
    assert result["data"]["content"] == [text("echo x")]
    second = fake.requests[1].json["messages"]
    assert second[-2]["tool_calls"][0]["function"] == {
        "name": "echo",
        "arguments": '{"say":"x"}',
    }
    assert second[-1] == {"role": "tool", "tool_call_id": "c1", "content": "echo x"}


@pytest.mark.spec("REQ-1", "TURN-4")
def test_an_inject_during_the_request_waterfall_joins_the_next_request(harness, fake):
    fake.push(Reply(tool_calls=(ToolCall.of("echo", {}, id="c1"),)), Reply(text="ok"))

    async def scenario():
        loop = harness.loop(tools=[ECHO])

        async def late(context, config, next):
            if context.step == 1:
                context.loop.inject("late news")
            return await next()

        loop.hooks.request.register(late)
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    first, second = (r.plain_messages() for r in loop.requests)
    assert all("late news" not in str(m) for m in first)
    assert any("late news" in str(m) for m in second)
    injected = next(e for e in loop.session if e["type"] == "context/message")
    assert injected["seq"] > loop.requests[0].boundary


@pytest.mark.spec("REQ-1")
def test_a_step_start_listener_append_joins_the_next_request_not_the_current_one(
    harness, fake
):
    fake.push(Reply(tool_calls=(ToolCall.of("echo", {}, id="c1"),)), Reply(text="ok"))

    async def scenario():
        loop = harness.loop(tools=[ECHO])
        seen = []

        def on_event(event):
            if event["type"] == "step/start" and not seen:
                seen.append(event["seq"])
                loop.inject("from the step/start listener")

        loop.on_event(on_event)
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    first, second = loop.requests
    assert "step/start listener" not in str(first.plain_messages())
    assert "step/start listener" in str(second.plain_messages())


@pytest.mark.spec("REQ-1", "TURN-4")
def test_pre_step_appends_land_before_the_boundary_and_join_the_current_request(
    harness,
):
    async def scenario():
        loop = harness.loop()
        order = []

        async def pre_step(context):
            order.append(("pre-step", len(context.loop.session)))
            context.loop.inject("from pre-step")

        loop.hooks.pre_step.register(pre_step)
        await loop.send("go")
        return loop, order

    loop, order = harness.run(scenario())
    assert order == [("pre-step", 2)]
    assert types(loop.session)[:4] == [
        "turn/start",
        "user/message",
        "context/message",
        "step/start",
    ]
    wire = loop.requests[0].plain_messages()
    assert wire[-1]["content"][1] == text("from pre-step")


@pytest.mark.spec("TURN-2")
def test_pre_step_fires_once_per_step_before_the_step_opens(harness, fake):
    fake.push(Reply(tool_calls=(ToolCall.of("echo", {}, id="c1"),)), Reply(text="ok"))

    async def scenario():
        loop = harness.loop(tools=[ECHO])
        seen = []

        async def pre_step(context):
            open_steps = sum(
                1 if e["type"] == "step/start" else -1
                for e in context.loop.session
                if e["type"] in ("step/start", "step/end")
            )
            seen.append((context.step, open_steps))

        loop.hooks.pre_step.register(pre_step)
        await loop.send("go")
        return seen

    assert harness.run(scenario()) == [(1, 0), (2, 0)]


@pytest.mark.spec("TURN-4", "DERIVE-2")
def test_inject_while_idle_wraps_context_in_a_one_shot_turn_seen_by_the_next_request(
    harness,
):
    async def scenario():
        loop = harness.loop()
        loop.inject("cwd is /repo", source={"kind": "plugin", "plugin": "workspace"})
        await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert types(loop.session)[:3] == ["turn/start", "context/message", "turn/end"]
    assert loop.session[0]["data"]["trigger"] == {
        "kind": "injection",
        "source": {"kind": "plugin", "plugin": "workspace"},
    }
    assert loop.session[2]["data"]["reason"] == {"kind": "completed"}
    assert loop.session[3]["data"]["turn"] == 2
    wire = harness.fake.requests[0].json["messages"]
    assert wire[0] == {
        "role": "user",
        "content": '<context source="plugin">cwd is /repo</context>',
    }


@pytest.mark.spec("TURN-4")
def test_inject_while_running_appends_into_the_open_turn(harness):
    async def scenario():
        loop = harness.loop()

        async def pre_step(context):
            context.loop.inject("note")

        loop.hooks.pre_step.register(pre_step)
        await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert types(loop.session).count("turn/start") == 1


@pytest.mark.spec("DERIVE-2", "TURN-2")
def test_post_execute_context_is_appended_only_after_all_tool_results_of_the_step(
    harness, fake
):
    fake.push(
        Reply(
            tool_calls=(
                ToolCall.of("echo", {"say": "1"}, id="c1"),
                ToolCall.of("echo", {"say": "2"}, id="c2"),
            )
        ),
        Reply(text="ok"),
    )

    async def scenario():
        loop = harness.loop(tools=[ECHO])

        async def post_execute(context):
            return f"ctx-{context.call.call_id}"

        loop.hooks.post_execute.register(post_execute)
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    step_one = types(loop.session)[types(loop.session).index("tool/call") :]
    assert step_one[:7] == [
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
        "context/message",
        "context/message",
        "step/end",
    ]
    contexts = [e for e in loop.session if e["type"] == "context/message"]
    assert [c["data"]["content"] for c in contexts] == [
        [text("ctx-c1")],
        [text("ctx-c2")],
    ]
    wire = harness.fake.requests[1].json["messages"]
    assert [m["role"] for m in wire[-4:]] == ["tool", "tool", "user", "user"]


@pytest.mark.spec("DERIVE-2")
def test_a_failing_tool_becomes_an_error_result_not_a_failed_turn(harness, fake):
    async def broken(arguments, context):
        raise RuntimeError("disk on fire")

    fake.push(
        Reply(tool_calls=(ToolCall.of("broken", {}, id="c1"),)), Reply(text="sorry")
    )

    async def scenario():
        loop = harness.loop(tools=[Tool(name="broken", description="", execute=broken)])
        return loop, await loop.send("go")

    loop, result = harness.run(scenario())
    assert result.kind == "completed"
    failed = next(e for e in loop.session if e["type"] == "tool/result")
    assert failed["data"]["isError"] is True
    assert "disk on fire" in failed["data"]["content"][0]["text"]


@pytest.mark.spec("TURN-1")
def test_sequential_sends_each_get_their_own_turn_with_increasing_numbers(harness):
    async def scenario():
        import asyncio

        loop = harness.loop()
        results = await asyncio.gather(*(loop.send(f"m{i}") for i in range(4)))
        return loop, results

    loop, results = harness.run(scenario())
    assert [r.turn for r in results] == [1, 2, 3, 4]
    starts = [e["data"]["turn"] for e in loop.session if e["type"] == "turn/start"]
    assert starts == [1, 2, 3, 4]


@pytest.mark.spec("TURN-1", "TURN-2")
def test_a_reply_cut_by_max_tokens_drops_its_tool_calls_and_ends_the_turn(
    harness, fake
):
    fake.push(
        Reply(
            text="partial",
            tool_calls=(ToolCall.of("echo", {}, id="c1"),),
            finish_reason="length",
        )
    )

    async def scenario():
        loop = harness.loop(tools=[ECHO])
        return loop, await loop.send("go")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "max-tokens"}
    message = next(e for e in loop.session if e["type"] == "assistant/message")
    assert message["data"]["content"] == [text("partial")]
    assert "tool/call" not in types(loop.session)


@pytest.mark.spec("TURN-1")
def test_a_tool_may_return_an_explicit_error_result(harness, fake):
    async def refuse(arguments, context):
        return ToolResult(content="not allowed", is_error=True)

    fake.push(Reply(tool_calls=(ToolCall.of("refuse", {}, id="c1"),)), Reply(text="ok"))

    async def scenario():
        loop = harness.loop(tools=[Tool(name="refuse", description="", execute=refuse)])
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    result = next(e for e in loop.session if e["type"] == "tool/result")
    assert result["data"]["isError"] is True


@pytest.mark.spec("TURN-1", "JSON-5")
def test_a_turn_numbered_with_an_integral_float_counts_as_that_integer(harness):
    from reqfold.reference.session_log import SessionLog

    seed = SessionLog()
    trigger = {"kind": "message", "source": {"kind": "user"}}
    seed.append("turn/start", {"turn": 1.0, "trigger": trigger}, time=1)
    seed.append("turn/end", {"turn": 1.0, "reason": {"kind": "completed"}}, time=2)

    async def scenario():
        loop = harness.loop(session=seed)
        assert loop.last_turn == 1
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.turn == 2
    starts = [e["data"]["turn"] for e in loop.session if e["type"] == "turn/start"]
    assert starts == [1, 2]


@pytest.mark.spec("TURN-1", "TURN-4")
def test_inject_on_a_disposed_loop_is_refused_and_logs_nothing(harness):
    from reqfold.reference.loop import LoopDisposed

    loop = harness.loop()
    loop.dispose()
    with pytest.raises(LoopDisposed):
        loop.inject("too late")
    assert len(loop.session) == 0
