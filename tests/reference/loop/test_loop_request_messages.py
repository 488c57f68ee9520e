"""Per-step framing messages, revision request-messages (anchor 6; items 31-36)."""

from __future__ import annotations

import pytest
from messages import text, user

from reqfold.reference.header import fold_request_header
from reqfold.reference.loop import Framing, thaw
from reqfold.reference.reconstruct import header_events
from reqfold.reference.revisions import Revision

R3 = Revision.REQUEST_MESSAGES


@pytest.mark.spec("REQ-4", "RMSG-1", "RMSG-2", "MSGS-1")
def test_framing_wraps_the_derived_history_and_the_header_records_both_sides(harness):
    async def scenario():
        loop = harness.loop(revision=R3)

        async def frame(context, framing, next):
            base = await next()
            return Framing(
                before=[user("reminder"), *base.before],
                after=[*base.after, user("trailer")],
            )

        loop.hooks.request_messages.register(frame)
        await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    wire = harness.fake.requests[0].json["messages"]
    assert [m["content"] for m in wire] == ["reminder", "hi", "trailer"]
    header = header_events(loop.session.events)[0]["data"]["header"]
    assert header["messagePrefix"] == [user("reminder")]
    assert header["messageSuffix"] == [user("trailer")]
    assert loop.session.derive_messages() == [
        user("hi"),
        {"role": "assistant", "content": [text("ok")]},
    ]


@pytest.mark.spec("REQ-4", "RMSG-1")
def test_contributions_compose_across_listeners_and_see_read_only_request_facts(
    harness,
):
    async def scenario():
        loop = harness.loop(revision=R3, system="the system")
        seen = []

        def prepend(message):
            async def listener(context, framing, next):
                seen.append((context.system, thaw(context.boundary_messages)))
                base = await next()
                return Framing(before=[message, *base.before], after=base.after)

            return listener

        loop.hooks.request_messages.register(prepend(user("first")))
        loop.hooks.request_messages.register(prepend(user("second")))
        await loop.send("hi")
        return seen

    seen = harness.run(scenario())
    wire = harness.fake.requests[0].json["messages"]
    assert [m["content"] for m in wire] == ["the system", "first", "second", "hi"]
    assert seen[0] == ("the system", [user("hi")])


@pytest.mark.spec("REQ-4", "HDR-4")
def test_with_no_framing_the_header_omits_both_fields_and_sends_the_bare_derivation(
    harness,
):
    async def scenario():
        loop = harness.loop(revision=R3)
        await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    header = header_events(loop.session.events)[0]["data"]["header"]
    assert set(header) == {"config"}
    assert [m["content"] for m in harness.fake.requests[0].json["messages"]] == ["hi"]


@pytest.mark.spec("REQ-7", "RMSG-1")
def test_the_frozen_seed_and_the_boundary_context_reject_in_place_mutation(harness):
    async def scenario():
        loop = harness.loop(revision=R3)
        errors = []

        async def mutate(context, framing, next):
            for attempt in (
                lambda: framing.before.append(user("x")),
                lambda: context.boundary_messages[0]["content"].append(text("x")),
            ):
                try:
                    attempt()
                except (AttributeError, TypeError) as error:
                    errors.append(type(error).__name__)
            return await next()

        loop.hooks.request_messages.register(mutate)
        await loop.send("hi")
        return errors

    assert harness.run(scenario()) == ["AttributeError", "AttributeError"]
    assert [m["content"] for m in harness.fake.requests[0].json["messages"]] == ["hi"]


@pytest.mark.spec("RMSG-2", "WRITER-3", "DELTA-5", "FOLD-1")
def test_a_per_step_framing_change_is_logged_as_a_delta_replacing_the_array_whole(
    harness,
):
    async def scenario():
        loop = harness.loop(revision=R3)

        async def frame(context, framing, next):
            base = await next()
            if context.turn == 1:
                return Framing(before=[user("v1")], after=[user("tail")])
            if context.turn == 2:
                return Framing(before=[user("v2"), user("more")], after=[user("tail")])
            return base

        loop.hooks.request_messages.register(frame)
        for prompt in ("one", "two", "three"):
            await loop.send(prompt)
        return loop

    loop = harness.run(scenario())
    logged = header_events(loop.session.events)
    assert [e["data"] for e in logged[1:]] == [
        {"messagePrefix": [user("v2"), user("more")]},
        {"messagePrefix": [], "messageSuffix": []},
    ]
    assert fold_request_header(loop.session.events, revision=R3) == {
        "config": {"model": "deepseek-chat"}
    }


@pytest.mark.spec("RMSG-1", "REQ-1")
def test_a_framing_listener_s_session_appends_join_the_next_request(harness):
    async def scenario():
        loop = harness.loop(revision=R3)

        async def frame(context, framing, next):
            if context.turn == 1:
                context.loop.inject("noted during framing")
            return await next()

        loop.hooks.request_messages.register(frame)
        await loop.send("one")
        await loop.send("two")
        return loop

    harness.run(scenario())
    first, second = (c.json["messages"] for c in harness.fake.requests)
    assert "noted during framing" not in str(first)
    assert "noted during framing" in str(second)
