"""The session prefix, final design.

Anchor 5 (R4b), prefix follow-ups 6-7; checklist items 37-42 and 47-49.
An interrupted composition (PREFIX-5) is in test_loop_prefix_interrupts.py.
"""

from __future__ import annotations

import pytest
from messages import types, user

from reqfold.fakes import Reply, ToolCall
from reqfold.reference.header import fold_request_header
from reqfold.reference.loop import Tool, thaw
from reqfold.reference.reconstruct import header_events


def prepend(message, log=None):
    async def listener(context, prefix, next):
        if log is not None:
            log.append("compose")
        return [message, *await next()]

    return listener


async def noop(arguments, context):
    return "done"


@pytest.mark.spec("PREFIX-1", "PREFIX-2", "REQ-5", "DERIVE-1")
def test_the_prefix_is_composed_once_per_instance_and_fronts_every_request(
    harness, fake
):
    fake.push(
        Reply(tool_calls=(ToolCall.of("noop", {}, id="c1"),)),
        Reply(text="a"),
        Reply(text="b"),
    )

    async def scenario():
        loop = harness.loop(tools=[Tool(name="noop", description="", execute=noop)])
        log = []
        loop.hooks.session_prefix.register(prepend(user("rules"), log))
        await loop.send("one")
        await loop.send("two")
        return loop, log

    loop, log = harness.run(scenario())
    assert log == ["compose"]
    assert loop.compositions == 1
    assert len(loop.requests) == 3
    for request in loop.requests:
        assert thaw(request.messages[0]) == user("rules")
    logged = header_events(loop.session.events)
    assert len(logged) == 1
    assert logged[0]["data"]["header"]["messagePrefix"] == [user("rules")]
    assert user("rules") not in loop.session.derive_messages()
    for captured in fake.requests:
        assert captured.json["messages"][0] == {"role": "user", "content": "rules"}


@pytest.mark.spec("PREFIX-1")
def test_the_prefix_is_composed_before_the_first_pre_step_which_receives_it(harness):
    async def scenario():
        loop = harness.loop()
        order = []

        async def compose(context, prefix, next):
            order.append("compose")
            return [user("p"), *await next()]

        async def pre_step(context):
            order.append(("pre-step", thaw(context.session_prefix)))

        loop.hooks.session_prefix.register(compose)
        loop.hooks.pre_step.register(pre_step)
        await loop.send("one")
        await loop.send("two")
        return order

    assert harness.run(scenario()) == [
        "compose",
        ("pre-step", [user("p")]),
        ("pre-step", [user("p")]),
    ]


@pytest.mark.spec("PREFIX-1", "REQ-5")
def test_the_canonical_prepend_pattern_composes_contributions_in_registration_order(
    harness,
):
    async def scenario():
        loop = harness.loop()
        loop.hooks.session_prefix.register(prepend(user("first")))
        loop.hooks.session_prefix.register(prepend(user("second")))
        await loop.send("hi")
        return loop

    harness.run(scenario())
    wire = harness.fake.requests[0].json["messages"]
    assert [m["content"] for m in wire] == ["first", "second", "hi"]


@pytest.mark.spec("PREFIX-1")
def test_the_append_pattern_composes_contributions_in_reverse_registration_order(
    harness,
):
    async def scenario():
        loop = harness.loop()

        def append(message):
            async def listener(context, prefix, next):
                return [*await next(), message]

            return listener

        loop.hooks.session_prefix.register(append(user("first")))
        loop.hooks.session_prefix.register(append(user("second")))
        loop.hooks.session_prefix.register(prepend(user("zeroth")), prepend=True)
        await loop.send("hi")

    harness.run(scenario())
    wire = harness.fake.requests[0].json["messages"]
    assert [m["content"] for m in wire] == ["zeroth", "second", "first", "hi"]


@pytest.mark.spec("PREFIX-3", "HDR-4", "REQ-5")
def test_an_empty_composition_omits_message_prefix_and_sends_the_bare_derivation(
    harness,
):
    async def scenario():
        loop = harness.loop()

        async def nothing(context, prefix, next):
            return await next()

        loop.hooks.session_prefix.register(nothing)
        await loop.send("hi")
        await loop.send("again")
        return loop

    loop = harness.run(scenario())
    assert loop.compositions == 1
    assert loop.session_prefix == ()
    snapshot = header_events(loop.session.events)[0]
    assert "messagePrefix" not in snapshot["data"]["header"]
    assert [
        thaw(m) for m in loop.requests[0].messages
    ] == loop.session.derive_messages()[:1]


@pytest.mark.spec("PREFIX-1")
def test_the_frozen_seed_rejects_in_place_mutation(harness):
    async def scenario():
        loop = harness.loop()

        async def mutate(context, prefix, next):
            prefix.append(user("smuggled"))
            return prefix

        loop.hooks.session_prefix.register(mutate)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.kind == "error"
    assert isinstance(result.error, AttributeError)
    assert loop.session_prefix is None
    assert "step/start" not in types(loop.session)


@pytest.mark.spec("PREFIX-1", "REQ-7")
def test_mutating_a_listener_held_reference_cannot_alter_later_requests(
    harness,
):
    held = [user("v1")]

    async def scenario():
        loop = harness.loop()

        async def compose(context, prefix, next):
            return held

        loop.hooks.session_prefix.register(compose)
        await loop.send("one")
        held[0]["content"][0]["text"] = "v2"
        held.append(user("extra"))
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    assert [thaw(r.messages[0]) for r in loop.requests] == [user("v1"), user("v1")]
    assert len(header_events(loop.session.events)) == 1
    with pytest.raises(TypeError):
        loop.session_prefix[0]["content"] = []


@pytest.mark.spec("PREFIX-4", "REQ-1")
def test_a_composing_listener_s_session_appends_join_the_current_request(harness):
    async def scenario():
        loop = harness.loop()

        async def compose(context, prefix, next):
            context.loop.inject("workspace changed while offline")
            return [user("rules"), *await next()]

        loop.hooks.session_prefix.register(compose)
        await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert types(loop.session)[:4] == [
        "turn/start",
        "user/message",
        "context/message",
        "step/start",
    ]
    wire = harness.fake.requests[0].json["messages"]
    assert [m["content"] for m in wire] == [
        "rules",
        "hi",
        '<context source="user">workspace changed while offline</context>',
    ]


@pytest.mark.spec("PREFIX-6", "WRITER-1", "SNAP-1", "CACHE-3")
def test_a_resumed_instance_recomposes_and_its_drift_shows_only_on_its_resume_snapshot(
    harness,
):
    async def scenario():
        first = harness.loop()
        first.hooks.session_prefix.register(prepend(user("skills: a")))
        await first.send("one")
        await first.send("two")
        second = harness.loop(session=first.session)
        second.hooks.session_prefix.register(prepend(user("skills: a, b")))
        await second.send("three")
        await second.send("four")
        return second

    loop = harness.run(scenario())
    logged = header_events(loop.session.events)
    assert [(e["type"], e["data"].get("reason")) for e in logged] == [
        ("request/header", "initial"),
        ("request/header", "resume"),
    ]
    assert logged[0]["data"]["header"]["messagePrefix"] == [user("skills: a")]
    assert logged[1]["data"]["header"]["messagePrefix"] == [user("skills: a, b")]
    assert fold_request_header(loop.session.events)["messagePrefix"] == [
        user("skills: a, b")
    ]


@pytest.mark.spec("PREFIX-6", "CACHE-3")
def test_an_unchanged_composition_resumes_byte_identically_extending_the_last_request(
    harness,
):
    async def scenario():
        first = harness.loop(system="persona " * 80)
        first.hooks.session_prefix.register(prepend(user("rules " * 50)))
        await first.send("one")
        second = harness.loop(system="persona " * 80, session=first.session)
        second.hooks.session_prefix.register(prepend(user("rules " * 50)))
        await second.send("two")
        return second

    second = harness.run(scenario())
    logged = header_events(second.session.events)
    assert logged[0]["data"]["header"] == logged[1]["data"]["header"]
    before, after = harness.fake.requests
    assert (
        after.json["messages"][: len(before.json["messages"])]
        == before.json["messages"]
    )
    assert after.diagnostic["relation"] == "append"
    assert after.usage["prompt_cache_hit_tokens"] > 0


@pytest.mark.spec("PREFIX-2", "WRITER-3")
def test_a_header_change_within_the_instance_never_carries_a_message_prefix_arm(
    harness,
):
    async def scenario():
        loop = harness.loop(system="v1")
        loop.hooks.session_prefix.register(prepend(user("p")))
        await loop.send("one")
        loop.system = "v2"
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    delta = header_events(loop.session.events)[1]
    assert delta["type"] == "request/header-delta"
    assert set(delta["data"]) == {"system"}


@pytest.mark.spec("PREFIX-2", "WRITER-4")
def test_a_fallback_snapshot_carries_the_same_prefix_as_the_header_it_replaces(harness):
    async def run_tool(arguments, context):
        return ""

    tools = [Tool(name=n, description="", execute=run_tool) for n in ("a", "b")]

    async def scenario():
        loop = harness.loop(tools=tools)
        loop.hooks.session_prefix.register(prepend(user("p")))
        await loop.send("one")
        loop.tool_order = ["b", "a"]
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    initial, fallback = header_events(loop.session.events)
    assert fallback["data"]["reason"] == "fallback"
    assert (
        fallback["data"]["header"]["messagePrefix"]
        == initial["data"]["header"]["messagePrefix"]
    )


@pytest.mark.spec("PREFIX-1")
def test_a_turn_that_fails_before_composition_does_not_consume_the_composition(harness):
    async def scenario():
        loop = harness.loop()
        fail = [True]

        async def assemble(context, assembly, next):
            if fail.pop() if fail else False:
                raise RuntimeError("assembly broke")
            return await next()

        loop.hooks.system_prompt.register(assemble)
        loop.hooks.session_prefix.register(prepend(user("p")))
        first = await loop.send("one")
        await loop.send("two")
        return loop, first

    loop, first = harness.run(scenario())
    assert first.kind == "error"
    assert loop.compositions == 1


@pytest.mark.spec("PREFIX-1")
def test_the_session_prefix_seam_does_not_exist_in_earlier_revisions(harness):
    from reqfold.reference.revisions import Revision

    loop = harness.loop(revision=Revision.REQUEST_MESSAGES)
    with pytest.raises(ValueError, match="session-prefix"):
        loop.hooks.session_prefix.register(prepend(user("p")))
