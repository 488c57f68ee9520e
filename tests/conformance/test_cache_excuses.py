"""What in a log excuses a request that does not extend the previous one.

The cache checks (CACHE-1, CACHE-3) are skipped where the log explains a
changed opening. An excuse found in the wrong place silences the check,
so these tests pin where the search starts and ends.
"""

from __future__ import annotations

import pytest

from reqfold.conformance.harness.stability import _excuse
from reqfold.reference.json_values import JsonObject
from reqfold.reference.reconstruct import RebuiltRequest


def step(boundary: int, header_seq: int | None, **header: object) -> RebuiltRequest:
    return RebuiltRequest(
        turn=0,
        step=0,
        boundary=boundary,
        header_seq=header_seq,
        header=dict(header),
        messages=[],
        evidence="response",
    )


def log(*types: str) -> list[JsonObject]:
    return [{"seq": seq, "type": kind} for seq, kind in enumerate(types)]


EVENTS = log(
    "turn/start",  # 0
    "step/start",  # 1: the previous step
    "request/header",  # 2: its own snapshot, already in its request
    "assistant/message",  # 3
    "step/end",  # 4
    "step/start",  # 5: the step judged
)


@pytest.mark.spec("CACHE-1")
def test_the_previous_steps_own_header_event_excuses_nothing() -> None:
    assert _excuse(EVENTS, step(1, 2), step(5, None)) is None


@pytest.mark.spec("CACHE-1")
def test_a_header_event_after_the_previous_request_excuses_the_change() -> None:
    events = log(
        "turn/start",
        "step/start",
        "request/header",
        "request/header-delta",
        "step/start",
    )
    assert _excuse(events, step(1, 2), step(4, None)) == "a header event at seq 3"


@pytest.mark.spec("CACHE-1")
def test_the_steps_own_header_event_excuses_the_change() -> None:
    assert _excuse(EVENTS, step(1, 2), step(5, 6)) == "a header event at seq 6"


@pytest.mark.spec("CACHE-1")
def test_a_previous_step_without_a_header_event_is_searched_from_its_boundary() -> None:
    events = log("step/start", "request/header-delta", "step/start")
    assert _excuse(events, step(0, None), step(2, None)) == "a header event at seq 1"
