"""The writer, driven by the loop, in every revision (anchor items 18-21, 25, 28)."""

from __future__ import annotations

import pytest
from messages import types

from reqfold.reference.header import fold_request_header
from reqfold.reference.json_values import json_equal
from reqfold.reference.loop import Tool, thaw
from reqfold.reference.reconstruct import header_events
from reqfold.reference.revisions import Revision

REVISIONS = pytest.mark.parametrize("revision", list(Revision), ids=lambda r: r.value)


async def noop(arguments, context):
    return ""


def tool(name):
    return Tool(name=name, description=f"the {name} tool", execute=noop)


@REVISIONS
@pytest.mark.spec("WRITER-1", "WRITER-2", "SNAP-1", "WRITER-6")
def test_a_new_conversation_is_anchored_by_an_initial_snapshot_then_logs_nothing(
    harness, revision
):
    async def scenario():
        loop = harness.loop(system="Be brief.", tools=[tool("read")], revision=revision)
        for prompt in ("one", "two", "three"):
            await loop.send(prompt)
        return loop

    loop = harness.run(scenario())
    logged = header_events(loop.session.events)
    assert [(e["type"], e["data"].get("reason")) for e in logged] == [
        ("request/header", "initial")
    ]
    assert logged[0]["data"]["header"] == {
        "config": {"model": "deepseek-chat"},
        "system": "Be brief.",
        "tools": [tool("read").schema()],
    }


@REVISIONS
@pytest.mark.spec("WRITER-1", "WRITER-6", "CACHE-3")
def test_a_fresh_instance_over_an_anchored_log_logs_a_resume_snapshot_even_unchanged(
    harness, revision
):
    async def scenario():
        first = harness.loop(system="Be brief.", revision=revision)
        await first.send("one")
        second = harness.loop(
            system="Be brief.", revision=revision, session=first.session
        )
        await second.send("two")
        await second.send("three")
        return second

    loop = harness.run(scenario())
    reasons = [e["data"].get("reason") for e in header_events(loop.session.events)]
    assert reasons == ["initial", "resume"]
    snapshots = header_events(loop.session.events)
    assert snapshots[0]["data"]["header"] == snapshots[1]["data"]["header"]


@REVISIONS
@pytest.mark.spec("WRITER-3", "DELTA-2", "FOLD-1", "REQ-2")
def test_a_mid_run_change_logs_a_round_tripping_delta_the_fold_reproduces(
    harness, revision
):
    async def scenario():
        loop = harness.loop(
            system="line one\nline two", tools=[tool("read")], revision=revision
        )
        await loop.send("one")
        loop.system = "line one\nline 2\nline three"
        loop.tools["write"] = tool("write")
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    logged = header_events(loop.session.events)
    assert types(logged) == ["request/header", "request/header-delta"]
    assert logged[1]["data"] == {
        "system": {"keepStart": 1, "keepEnd": 0, "insert": ["line 2", "line three"]},
        "tools": {"added": [tool("write").schema()], "removed": [], "changed": []},
    }
    folded = fold_request_header(loop.session.events, revision=revision)
    assert json_equal(folded, loop.requests[-1].plain_header())


@REVISIONS
@pytest.mark.spec("WRITER-4", "DELTA-6", "EQ-3", "FOLD-1")
def test_a_pure_tool_reorder_is_recorded_as_a_fallback_snapshot(harness, revision):
    async def scenario():
        loop = harness.loop(tools=[tool("a"), tool("b")], revision=revision)
        await loop.send("one")
        loop.tool_order = ["b", "a"]
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    logged = header_events(loop.session.events)
    assert [e["data"].get("reason") for e in logged] == ["initial", "fallback"]
    folded = fold_request_header(loop.session.events, revision=revision)
    assert [t["name"] for t in folded["tools"]] == ["b", "a"]


@REVISIONS
@pytest.mark.spec("WRITER-2", "CACHE-1")
def test_re_rendering_an_identical_assembly_every_step_logs_nothing(harness, revision):
    async def scenario():
        loop = harness.loop(system="stable", revision=revision)

        async def rerender(context, assembly, next):
            base = await next()
            return type(base)(
                system="".join(list(base.system)), tools=tuple(base.tools)
            )

        loop.hooks.system_prompt.register(rerender)
        await loop.send("one")
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    assert len(header_events(loop.session.events)) == 1


@REVISIONS
@pytest.mark.spec("WRITER-3", "DELTA-4", "EQ-2")
def test_a_config_switch_by_a_listener_is_logged_and_persists_as_the_new_baseline(
    harness, revision
):
    async def scenario():
        loop = harness.loop(revision=revision)
        calls = []

        async def sampling(context, config, next):
            base = await next()
            calls.append(thaw(base))
            if len(calls) == 2:
                return {**base, "temperature": 0.2, "maxTokens": 100, "stop": []}
            return base

        loop.hooks.request.register(sampling)
        for prompt in ("one", "two", "three"):
            await loop.send(prompt)
        return loop, calls

    loop, calls = harness.run(scenario())
    logged = header_events(loop.session.events)
    assert types(logged) == ["request/header", "request/header-delta"]
    assert logged[1]["data"] == {
        "config": {
            "model": "deepseek-chat",
            "temperature": 0.2,
            "maxTokens": 100,
            "stop": [],
        }
    }
    assert calls[2] == logged[1]["data"]["config"]
    third = harness.fake.requests[2].json
    assert (third["temperature"], third["max_tokens"], third["stop"]) == (0.2, 100, [])


@REVISIONS
@pytest.mark.spec("WRITER-5", "TURN-3")
def test_each_request_appends_at_most_one_header_event_inside_its_step(
    harness, revision
):
    async def scenario():
        loop = harness.loop(tools=[tool("a"), tool("b")], revision=revision)
        await loop.send("one")
        loop.system = "changed"
        loop.tool_order = ["b", "a"]
        await loop.send("two")
        loop.system = "changed again"
        await loop.send("three")
        return loop

    loop = harness.run(scenario())
    per_step = {}
    step = None
    for event in loop.session:
        if event["type"] == "step/start":
            step = event["seq"]
            per_step[step] = 0
        elif event["type"] == "step/end":
            step = None
        elif event["type"].startswith("request/header"):
            assert step is not None
            per_step[step] += 1
    assert sorted(per_step.values()) == [1, 1, 1]


@pytest.mark.spec("WRITER-1")
def test_a_first_step_that_fails_before_the_writer_leaves_the_next_request_to_anchor(
    harness,
):
    async def scenario():
        loop = harness.loop()

        async def fail_once(context, config, next):
            if context.turn == 1:
                raise RuntimeError("listener broke")
            return await next()

        loop.hooks.request.register(fail_once)
        first = await loop.send("one")
        await loop.send("two")
        return loop, first

    loop, first = harness.run(scenario())
    assert first.kind == "error"
    reasons = [e["data"].get("reason") for e in header_events(loop.session.events)]
    assert reasons == ["initial"]


@pytest.mark.spec("WRITER-1", "WRITER-2", "WRITER-6")
def test_a_listener_failing_on_the_snapshot_does_not_make_the_next_turn_log_another(
    harness,
):
    async def scenario():
        loop = harness.loop()
        failures = []

        def on_event(event):
            if event["type"] == "request/header" and not failures:
                failures.append(event["seq"])
                raise RuntimeError("metrics listener failed")

        loop.on_event(on_event)
        first = await loop.send("one")
        second = await loop.send("two")
        return loop, first, second

    loop, first, second = harness.run(scenario())
    assert first.reason["message"] == "metrics listener failed"
    assert second.kind == "completed"
    logged = header_events(loop.session.events)
    assert [(e["type"], e["data"]["reason"]) for e in logged] == [
        ("request/header", "initial")
    ]


@pytest.mark.spec("REQ-2", "REQ-6", "CACHE-1", "JSON-2", "WRITER-2")
def test_a_config_or_schema_equal_by_value_is_sent_as_the_log_spells_it(harness):
    def schema(minimum):
        return Tool(
            name="pick",
            description="Pick a number.",
            parameters={"type": "object", "minimum": minimum},
            execute=noop,
        )

    async def scenario():
        loop = harness.loop(config={"model": "deepseek-chat", "temperature": 0})
        loop.tools = {"pick": schema(1)}
        await loop.send("one")

        async def respell(context, config, next):
            return {**(await next()), "temperature": 0.0}

        loop.hooks.request.register(respell)
        loop.tools = {"pick": schema(1.0)}
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    assert len(header_events(loop.session.events)) == 1
    first, second = (c.raw_body for c in harness.fake.requests)
    assert second.endswith(b'"minimum":1}}}],"temperature":0}')
    assert first.split(b'"tools":')[1] == second.split(b'"tools":')[1]
