"""Cancelling a turn: the loop's cancel, the caller's task, a listener's CancelledError.

Every tool call of the step is still answered (TURN-2, WIRE-2). Cancels at
the request's edges are in test_loop_interrupts.py.
"""

from __future__ import annotations

import pytest
from messages import types

from reqfold.fakes import Reply, ToolCall
from reqfold.reference.loop import Tool


async def echo(arguments, context):
    return f"echo {arguments.get('say', '')}"


@pytest.mark.spec("TURN-1", "TURN-2")
@pytest.mark.parametrize("where", ["on_event", "pre_step", "tool"])
def test_a_cancelled_error_raised_by_a_listener_is_a_listener_error_not_a_cancellation(
    harness, fake, where
):
    import asyncio

    fake.push(Reply(tool_calls=(ToolCall.of("stop", {}, id="c1"),)), Reply(text="ok"))

    async def stop(arguments, context):
        raise asyncio.CancelledError()

    async def scenario():
        loop = harness.loop(tools=[Tool(name="stop", description="", execute=stop)])
        if where == "on_event":

            def on_event(event):
                if event["type"] == "step/start":
                    raise asyncio.CancelledError()

            loop.on_event(on_event)
        elif where == "pre_step":

            async def pre_step(context):
                raise asyncio.CancelledError()

            loop.hooks.pre_step.register(pre_step)
        result = await loop.send("go")
        follow_up = await loop.send("again")
        return loop, result, follow_up

    loop, result, follow_up = harness.run(scenario())
    if where == "tool":
        assert result.kind == "completed"
        answer = next(e for e in loop.session if e["type"] == "tool/result")
        assert answer["data"]["isError"] is True
    else:
        assert result.kind == "error"
    assert follow_up.turn == result.turn + 1


@pytest.mark.spec("TURN-1", "TURN-2")
def test_cancelling_the_caller_s_task_still_ends_the_turn_and_propagates(harness, fake):
    import asyncio

    from reqfold.fakes import Gate

    gate = Gate("held")
    fake.push(Reply(text="never", hold=gate))
    harness.check_theorem = False  # aborted in flight: the capture may not match

    async def scenario():
        loop = harness.loop()
        task = asyncio.ensure_future(loop.send("hi"))
        for _ in range(1000):
            if gate.waiting:
                break
            await asyncio.sleep(0)
        assert gate.waiting == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gate.open()
        return loop

    loop = harness.run(scenario())
    assert loop.session[-1]["data"]["reason"] == {
        "kind": "aborted",
        "reason": "task cancelled",
    }


@pytest.mark.spec("TURN-2", "DERIVE-2", "WIRE-2")
def test_a_cancel_mid_step_skips_the_remaining_tool_calls_with_error_results(
    harness, fake
):
    fake.push(
        Reply(
            tool_calls=(
                ToolCall.of("echo", {"say": "1"}, id="c1"),
                ToolCall.of("echo", {"say": "2"}, id="c2"),
                ToolCall.of("echo", {"say": "3"}, id="c3"),
            )
        ),
        Reply(text="fine"),
    )
    ran = []

    async def echo_then_cancel(arguments, context):
        ran.append(context.call_id)
        context.loop.cancel("escape")
        return f"echo {arguments['say']}"

    async def scenario():
        loop = harness.loop(
            tools=[Tool(name="echo", description="", execute=echo_then_cancel)]
        )
        first = await loop.send("go")
        second = await loop.send("and now?")
        return loop, first, second

    loop, first, second = harness.run(scenario())
    assert ran == ["c1"]
    assert first.reason == {"kind": "aborted", "reason": "escape"}
    assert second.kind == "completed"
    message = next(e for e in loop.session if e["type"] == "assistant/message")
    step_one = [e for e in loop.session if e["seq"] > message["seq"]][:6]
    assert types(step_one) == [
        "tool/call",
        "tool/result",
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    call, done, *skipped = step_one[:4]
    assert done["data"]["isError"] is False
    assert done["sourceEventSeqs"] == [call["seq"]]
    for result, call_id in zip(skipped, ["c2", "c3"], strict=True):
        assert result["data"]["callId"] == call_id
        assert result["data"]["isError"] is True
        assert result["data"]["content"][0]["text"].startswith("not run")
        assert result["sourceEventSeqs"] == [message["seq"]]
    wire = harness.fake.requests[1].json["messages"]
    assert [m.get("tool_call_id") for m in wire if m["role"] == "tool"] == [
        "c1",
        "c2",
        "c3",
    ]


@pytest.mark.spec("TURN-2", "DERIVE-2", "LOG-5")
def test_cancelling_the_caller_s_task_mid_tool_answers_the_running_and_pending_calls(
    harness, fake
):
    import asyncio

    fake.push(
        Reply(
            tool_calls=(
                ToolCall.of("wait", {}, id="c1"),
                ToolCall.of("wait", {}, id="c2"),
            )
        )
    )

    async def scenario():
        running = asyncio.Event()

        async def wait(arguments, context):
            running.set()
            await asyncio.Event().wait()

        loop = harness.loop(tools=[Tool(name="wait", description="", execute=wait)])
        task = asyncio.ensure_future(loop.send("go"))
        await running.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return loop

    loop = harness.run(scenario())
    call = next(e for e in loop.session if e["type"] == "tool/call")
    message = next(e for e in loop.session if e["type"] == "assistant/message")
    tail = [e for e in loop.session if e["seq"] > call["seq"]]
    assert types(tail) == ["tool/result", "tool/result", "step/end", "turn/end"]
    running, pending = tail[:2]
    assert running["sourceEventSeqs"] == [call["seq"]]
    assert running["data"]["content"][0]["text"].startswith("interrupted")
    assert pending["sourceEventSeqs"] == [message["seq"]]
    assert pending["data"]["content"][0]["text"].startswith("not run")
    assert tail[-1]["data"]["reason"] == {"kind": "aborted", "reason": "task cancelled"}
