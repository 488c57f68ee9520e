"""The cancel windows of a step: before its header event, in flight, and after.

A cancel or dispose at step/start, in a dispatch observer or while the
provider streams, and a provider error or a cut stream; the log still
rebuilds every request that was sent (anchor 4.3-4.9).
"""

from __future__ import annotations

import pytest
from messages import types

from reqfold.fakes import Reply, rate_limited, stream_cut
from reqfold.reference.reconstruct import compare_with_captures, rebuild_requests
from reqfold.reference.request import contract_view


class Recording:
    """A provider wrapper that records every call the loop starts."""

    def __init__(self, inner):
        self.inner = inner
        self.started = []

    async def complete(self, request, signal):
        self.started.append(request)
        return await self.inner.complete(request, signal)


@pytest.mark.spec("REQ-1", "TURN-2", "TURN-3")
def test_a_cancel_from_a_synchronous_step_start_listener_drops_the_step(harness):
    async def scenario():
        loop = harness.loop()

        def on_event(event):
            if event["type"] == "step/start":
                loop.cancel("from step/start")

        loop.on_event(on_event)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "aborted", "reason": "from step/start"}
    assert types(loop.session) == [
        "turn/start",
        "user/message",
        "step/start",
        "step/end",
        "turn/end",
    ]
    assert harness.fake.requests == []


@pytest.mark.spec("TURN-2")
def test_a_dispose_from_a_step_start_listener_closes_the_open_step_as_disposed(
    harness,
):
    async def scenario():
        loop = harness.loop()

        def on_event(event):
            if event["type"] == "step/start":
                loop.dispose()

        loop.on_event(on_event)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "disposed"}
    assert types(loop.session)[-2:] == ["step/end", "turn/end"]
    assert "request/header" not in types(loop.session)


@pytest.mark.spec("TURN-1", "TURN-2")
def test_a_cancel_while_the_provider_streams_aborts_the_turn_and_closes_the_step(
    harness, fake
):
    # The log cannot show whether a request aborted in flight was sent: the
    # step is a "maybe" (evidence "header").
    harness.check_theorem = False

    async def scenario():
        loop = harness.loop()

        def escape_while_in_flight(request):
            loop.cancel("user pressed escape")
            return Reply(text="never delivered", hold="held")

        fake.respond_with(escape_while_in_flight)
        result = await loop.send("hi")
        return loop, result

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "aborted", "reason": "user pressed escape"}
    assert types(loop.session)[-3:] == ["request/header", "step/end", "turn/end"]
    rebuilt = rebuild_requests(loop.session.events)
    assert [r.evidence for r in rebuilt] == ["header"]
    assert rebuilt[0].contract_body() == contract_view(fake.requests[0].json)


@pytest.mark.spec("REQ-2", "TURN-1")
def test_a_provider_error_ends_the_turn_with_its_code_and_the_request_still_rebuilds(
    harness, fake
):
    fake.push(rate_limited(retry_after=2.0, message="slow down"))

    async def scenario():
        loop = harness.loop()
        first = await loop.send("one")
        second = await loop.send("two")
        return loop, first, second

    loop, first, second = harness.run(scenario())
    assert first.reason == {
        "kind": "error",
        "step": 1,
        "message": "slow down",
        "code": "RATE_LIMIT",
    }
    assert second.kind == "completed"
    assert [r.evidence for r in rebuild_requests(loop.session.events)] == [
        "provider-error",
        "response",
    ]


@pytest.mark.spec("TURN-1")
def test_a_stream_cut_mid_way_ends_the_turn_with_stream_closed(harness, fake):
    fake.push(stream_cut(2, Reply(text="this answer breaks off somewhere")))

    async def scenario():
        loop = harness.loop()
        return await loop.send("hi")

    result = harness.run(scenario())
    assert result.reason["code"] == "STREAM_CLOSED"


@pytest.mark.spec("REQ-7", "REQ-2", "TURN-3")
@pytest.mark.parametrize("interrupt", ["cancel", "dispose", "raise"])
def test_a_dispatch_observer_that_interrupts_stops_the_step_before_its_header_is_logged(
    harness, interrupt
):
    async def scenario():
        loop = harness.loop()

        async def observe(context):
            if interrupt == "cancel":
                context.loop.cancel("observer")
            elif interrupt == "dispose":
                context.loop.dispose()
            else:
                raise RuntimeError("metrics backend down")

        loop.hooks.dispatch.register(observe)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.kind == {"cancel": "aborted", "dispose": "disposed"}.get(
        interrupt, "error"
    )
    assert types(loop.session) == [
        "turn/start",
        "user/message",
        "step/start",
        "step/end",
        "turn/end",
    ]
    assert loop.requests == []
    assert harness.fake.requests == []


@pytest.mark.spec("REQ-7", "REQ-2", "TURN-3")
@pytest.mark.parametrize("interrupt", ["cancel", "dispose", "raise"])
def test_once_the_header_event_is_logged_the_request_is_started_and_aborted_in_flight(
    harness, interrupt
):
    async def scenario():
        provider = Recording(harness.client())
        loop = harness.loop(client=provider)

        def on_event(event):
            if event["type"] == "request/header":
                if interrupt == "cancel":
                    loop.cancel("header listener")
                elif interrupt == "dispose":
                    loop.dispose()
                else:
                    raise RuntimeError("header listener broke")

        loop.on_event(on_event)
        return loop, provider, await loop.send("hi")

    loop, provider, result = harness.run(scenario())
    assert result.kind == {"cancel": "aborted", "dispose": "disposed"}.get(
        interrupt, "error"
    )
    assert types(loop.session)[2:] == [
        "step/start",
        "request/header",
        "step/end",
        "turn/end",
    ]
    assert len(provider.started) == 1
    assert loop.requests == provider.started
    rebuilt = rebuild_requests(loop.session.events)
    assert [r.evidence for r in rebuilt] == ["header"]
    assert (
        compare_with_captures(
            loop.session.events, [c.json for c in harness.fake.requests]
        )
        == []
    )
