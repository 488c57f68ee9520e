"""An interrupted composition of the session prefix is never cached (PREFIX-5).

A cancel, a dispose or a raise inside the session-prefix waterfall ends
the turn before any step opens, and the next turn recomposes.
"""

from __future__ import annotations

import asyncio

import pytest
from messages import types, user

from reqfold.reference.reconstruct import header_events


@pytest.mark.spec("PREFIX-5", "TURN-1")
def test_a_cancel_during_composition_drops_the_turn_with_no_step_opened(harness):
    async def scenario():
        loop = harness.loop()

        async def compose(context, prefix, next):
            context.loop.cancel("from prefix composition")
            return [user("degraded"), *await next()]

        loop.hooks.session_prefix.register(compose)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "aborted", "reason": "from prefix composition"}
    assert types(loop.session) == ["turn/start", "user/message", "turn/end"]
    assert harness.fake.requests == []
    assert loop.session_prefix is None


@pytest.mark.spec("PREFIX-5", "TURN-1")
def test_a_dispose_during_composition_ends_the_turn_disposed(harness):
    async def scenario():
        loop = harness.loop()

        async def compose(context, prefix, next):
            context.loop.dispose()
            return [user("degraded"), *await next()]

        loop.hooks.session_prefix.register(compose)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "disposed"}
    assert types(loop.session) == ["turn/start", "user/message", "turn/end"]
    assert harness.fake.requests == []
    assert loop.disposed


@pytest.mark.spec("PREFIX-5", "PREFIX-2", "WRITER-1")
def test_a_cancel_interrupted_composition_is_discarded_and_the_next_turn_recomposes(
    harness,
):
    async def scenario():
        loop = harness.loop()
        runs = []

        async def compose(context, prefix, next):
            runs.append(context.signal.aborted)
            if len(runs) == 1:
                context.loop.cancel("first attempt")
                return [user("stale"), *await next()]
            return [user("fresh opener"), *await next()]

        loop.hooks.session_prefix.register(compose)
        first = await loop.send("one")
        second = await loop.send("two")
        return loop, first, second

    loop, first, second = harness.run(scenario())
    assert (first.kind, second.kind) == ("aborted", "completed")
    assert loop.compositions == 2
    assert len(harness.fake.requests) == 1
    assert harness.fake.requests[0].json["messages"][0]["content"] == "fresh opener"
    snapshot = header_events(loop.session.events)[0]
    assert snapshot["data"]["header"]["messagePrefix"] == [user("fresh opener")]
    assert "stale" not in str(loop.session.events)


@pytest.mark.spec("PREFIX-5")
def test_appends_made_by_an_interrupted_composition_stay_in_the_aborted_turn(harness):
    async def scenario():
        loop = harness.loop()

        async def compose(context, prefix, next):
            context.loop.inject("scanned")
            context.loop.cancel("stop")
            return await next()

        loop.hooks.session_prefix.register(compose)
        await loop.send("one")
        return loop

    loop = harness.run(scenario())
    assert types(loop.session) == [
        "turn/start",
        "user/message",
        "context/message",
        "turn/end",
    ]


@pytest.mark.spec("PREFIX-5")
def test_a_throwing_composition_fails_the_turn_and_leaves_nothing_cached(harness):
    async def scenario():
        loop = harness.loop()
        runs = []

        async def compose(context, prefix, next):
            runs.append(1)
            if len(runs) == 1:
                raise RuntimeError("catalog unreadable")
            return [user("catalog"), *await next()]

        loop.hooks.session_prefix.register(compose)
        first = await loop.send("one")
        second = await loop.send("two")
        return loop, first, second

    loop, first, second = harness.run(scenario())
    assert first.reason["kind"] == "error"
    assert first.reason["message"] == "catalog unreadable"
    assert second.kind == "completed"
    assert loop.compositions == 2
    assert harness.fake.requests[0].json["messages"][0]["content"] == "catalog"


@pytest.mark.spec("PREFIX-5", "TURN-1")
@pytest.mark.parametrize(
    ("interrupt", "raised", "reason"),
    [
        ("cancel", RuntimeError, {"kind": "aborted", "reason": "user"}),
        ("cancel", asyncio.CancelledError, {"kind": "aborted", "reason": "user"}),
        ("dispose", RuntimeError, {"kind": "disposed"}),
    ],
    ids=["cancel-then-raise", "cancel-then-cancelled-error", "dispose-then-raise"],
)
def test_a_composition_that_raises_after_an_interrupt_ends_the_turn_interrupted(
    harness, interrupt, raised, reason
):
    async def scenario():
        loop = harness.loop()

        async def compose(context, prefix, next):
            if interrupt == "cancel":
                context.loop.cancel("user")
            else:
                context.loop.dispose()
            await asyncio.sleep(0)
            if context.signal.aborted:
                raise raised("aborted while scanning")
            return [user("catalog"), *await next()]

        loop.hooks.session_prefix.register(compose)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == reason
    assert types(loop.session) == ["turn/start", "user/message", "turn/end"]
    assert loop.session_prefix is None
    assert harness.fake.requests == []
