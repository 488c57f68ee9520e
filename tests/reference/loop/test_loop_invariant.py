"""The dev invariant: every request is cross-checked against its log rebuild.

`check_request` before every dispatch (REQ-1, REQ-2, REQ-5, REQ-7): it
catches a harness that derives after the boundary and refuses a diverging
request before its header event is logged.
"""

from __future__ import annotations

import pytest
from messages import text, types, user

from reqfold.reference.loop import (
    AgentLoop,
    FrozenRequest,
    RequestDiverges,
    check_request,
    thaw,
)
from reqfold.reference.reconstruct import header_events
from reqfold.reference.revisions import Revision


class DerivesAfterStepStart(AgentLoop):
    """A broken harness: it derives the history after appending step/start (pre-R2)."""

    def cross_boundary(self, turn, step):
        boundary = self.append("step/start", {"turn": turn, "step": step})["seq"]
        return self.session.derive_messages(), boundary


def run_a_turn_that_derives_after_the_boundary(harness):
    """A turn of `DerivesAfterStepStart` whose step/start listener injects."""
    harness.check_theorem = False

    async def scenario():
        loop = DerivesAfterStepStart(
            provider=harness.client(), model="deepseek-chat", clock=harness.clock
        )
        harness.loops.append(loop)

        def on_event(event):
            if event["type"] == "step/start":
                loop.inject("post-boundary note")

        loop.on_event(on_event)
        with pytest.raises(RequestDiverges, match=r"\[REQ-5\].*boundary derivation"):
            await loop.send("hi")
        return loop

    return harness.run(scenario())


def _log_with_one_step():
    from reqfold.reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append(
        "user/message",
        {"content": [text("hi")], "source": {"kind": "user"}},
        time=0,
        surface_op="append",
    )
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    header = {"config": {"model": "m"}, "messagePrefix": [user("p")]}
    log.append("request/header", {"header": header, "reason": "initial"}, time=0)
    log.append(
        "context/message",
        {"content": [text("late")], "source": {"kind": "user"}},
        time=0,
        surface_op="append",
    )
    return log, header


@pytest.mark.spec("REQ-1")
def test_the_dev_invariant_catches_a_harness_that_derives_after_the_boundary(harness):
    loop = run_a_turn_that_derives_after_the_boundary(harness)
    assert types(loop.session)[-2:] == ["step/end", "turn/end"]
    assert loop.session[-1]["data"]["reason"]["code"] == "REQUEST_DIVERGES"
    assert harness.fake.requests == []


@pytest.mark.parametrize(
    ("messages", "header", "rule"),
    [
        pytest.param([user("p"), user("hi")], None, None, id="exact request passes"),
        pytest.param(
            [user("p"), user("hi"), user("phantom")],
            None,
            "REQ-5",
            id="phantom message",
        ),
        pytest.param([user("hi")], None, "REQ-5", id="dropped prefix"),
        pytest.param([user("hi"), user("p")], None, "REQ-5", id="misplaced prefix"),
        pytest.param(
            [user("p"), user("hi")],
            {"config": {"model": "other"}, "messagePrefix": [user("p")]},
            "REQ-2",
            id="wrong model",
        ),
    ],
)
@pytest.mark.spec("REQ-1", "REQ-2", "REQ-5")
def test_the_cross_check_accepts_only_the_boundary_derivation_under_the_folded_header(
    messages, header, rule
):
    log, logged_header = _log_with_one_step()
    request = FrozenRequest.build(
        turn=1, step=1, boundary=2, header=header or logged_header, messages=messages
    )
    if rule is None:
        check_request(log.events, request, Revision.SESSION_PREFIX)
    else:
        with pytest.raises(RequestDiverges, match=rf"\[{rule}\]"):
            check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-7")
def test_the_cross_check_rejects_an_unfrozen_request():
    log, header = _log_with_one_step()
    request = FrozenRequest(
        turn=1, step=1, boundary=2, header=header, messages=(thaw(user("p")),)
    )
    with pytest.raises(RequestDiverges, match=r"\[REQ-7\]"):
        check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-2")
def test_the_cross_check_rejects_a_step_with_no_header_in_force():
    from reqfold.reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    request = FrozenRequest.build(
        turn=1, step=1, boundary=1, header={"config": {"model": "m"}}, messages=[]
    )
    with pytest.raises(RequestDiverges, match=r"\[REQ-2\]"):
        check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-1", "REQ-2", "TURN-3")
def test_the_dev_invariant_refuses_a_diverging_request_before_its_header_is_logged(
    harness,
):
    loop = run_a_turn_that_derives_after_the_boundary(harness)
    assert "request/header" not in types(loop.session)
    assert harness.fake.requests == []


@pytest.mark.spec("REQ-2", "CACHE-1", "JSON-2")
def test_the_cross_check_rejects_a_header_equal_by_value_but_spelled_differently():
    from reqfold.reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    header = {"config": {"model": "m", "temperature": 0}}
    log.append("request/header", {"header": header, "reason": "initial"}, time=0)
    request = FrozenRequest.build(
        turn=1,
        step=1,
        boundary=1,
        header={"config": {"model": "m", "temperature": 0.0}},
        messages=[],
    )
    with pytest.raises(RequestDiverges, match=r"\[REQ-2\].*byte"):
        check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-2", "WRITER-5")
def test_a_header_event_logged_by_a_dispatch_observer_is_refused_before_the_writer_logs(
    harness,
):
    harness.check_theorem = False

    async def scenario():
        loop = harness.loop()

        async def meddle(context):
            header = {"config": {"model": "other"}}
            context.loop.append(
                "request/header", {"header": header, "reason": "fallback"}
            )

        loop.hooks.dispatch.register(meddle)
        with pytest.raises(RequestDiverges, match=r"\[REQ-2\].*dispatch observers"):
            await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert [e["data"]["reason"] for e in header_events(loop.session.events)] == [
        "fallback"
    ]
    assert harness.fake.requests == []
