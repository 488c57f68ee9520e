"""The writer's decision: snapshot, nothing, delta or fallback."""

from __future__ import annotations

import pytest
from rejections import rejects

from reqfold.reference.errors import MalformedHeader
from reqfold.reference.header import apply_header_delta, fold_request_header
from reqfold.reference.revisions import Revision
from reqfold.reference.writer import record_header

M = {"model": "m"}


def tool(name: str) -> dict[str, object]:
    return {"name": name, "description": name, "parameters": {}}


@pytest.mark.spec("WRITER-1")
def test_a_new_conversation_is_anchored_by_an_initial_snapshot() -> None:
    event = record_header(None, False, {"config": M, "system": ""})
    assert event == {
        "type": "request/header",
        "data": {"header": {"config": M}, "reason": "initial"},
    }


@pytest.mark.spec("WRITER-1")
def test_a_new_instance_over_an_anchored_log_logs_resume_even_when_unchanged() -> None:
    header = {"config": M, "system": "s"}
    event = record_header(header, False, header)
    assert event == {
        "type": "request/header",
        "data": {"header": header, "reason": "resume"},
    }


@pytest.mark.spec("WRITER-2")
def test_an_unchanged_header_logs_nothing() -> None:
    header = {"config": M, "tools": [tool("a")]}
    assert (
        record_header(header, True, {"config": M, "tools": [tool("a")], "system": ""})
        is None
    )


@pytest.mark.spec("WRITER-3")
def test_a_change_that_round_trips_is_logged_as_exactly_its_diff() -> None:
    prev = {"config": M, "system": "a\nb", "tools": [tool("a")]}
    next_ = {"config": M, "system": "a\nc", "tools": [tool("a"), tool("b")]}
    event = record_header(prev, True, next_)
    assert event == {
        "type": "request/header-delta",
        "data": {
            "system": {"keepStart": 1, "keepEnd": 0, "insert": ["c"]},
            "tools": {"added": [tool("b")], "removed": [], "changed": []},
        },
    }
    assert apply_header_delta(prev, event["data"]) == next_


@pytest.mark.spec("WRITER-4")
def test_a_pure_tool_reorder_is_logged_as_a_fallback_snapshot() -> None:
    prev = {"config": M, "tools": [tool("a"), tool("b")]}
    next_ = {"config": M, "tools": [tool("b"), tool("a")]}
    event = record_header(prev, True, next_)
    assert event == {
        "type": "request/header",
        "data": {"header": next_, "reason": "fallback"},
    }
    log = [
        {
            "type": "request/header",
            "seq": 0,
            "data": {"header": prev, "reason": "initial"},
        },
        {"type": event["type"], "seq": 1, "data": event["data"]},
    ]
    assert fold_request_header(log) == next_


@pytest.mark.spec("WRITER-1")
def test_claiming_a_logged_header_without_a_baseline_is_an_error() -> None:
    # A misuse of the API, not a broken rule: the kind is pinned, not the words.
    with pytest.raises(ValueError) as caught:  # noqa: PT011
        record_header(None, True, {"config": M})
    assert type(caught.value) is ValueError


@pytest.mark.spec("HDR-1", "HDR-2")
def test_the_writer_refuses_a_malformed_header_naming_the_rule() -> None:
    with rejects(MalformedHeader, "HDR-1"):
        record_header(None, False, {"system": "s"})
    suffix = [{"role": "user", "content": []}]
    with rejects(MalformedHeader, "HDR-2"):
        record_header(None, False, {"config": M, "messageSuffix": suffix})
    assert record_header(
        None, False, {"config": M, "messageSuffix": suffix}, Revision.REQUEST_MESSAGES
    ) == {
        "type": "request/header",
        "data": {"header": {"config": M, "messageSuffix": suffix}, "reason": "initial"},
    }


@pytest.mark.spec("WRITER-2", "WRITER-3", "DELTA-5")
def test_the_writer_decides_in_the_revision_it_is_given() -> None:
    revision = Revision.REQUEST_MESSAGES
    before = {"config": M, "messageSuffix": [{"role": "user", "content": []}]}
    after = {"config": M, "messageSuffix": [{"role": "user", "content": [1]}]}
    assert record_header(before, True, dict(before), revision) is None
    assert record_header(before, True, after, revision) == {
        "type": "request/header-delta",
        "data": {"messageSuffix": after["messageSuffix"]},
    }
    reordered = {"config": M, "tools": [tool("b"), tool("a")], **after}
    event = record_header(
        {"config": M, "tools": [tool("a"), tool("b")], **after},
        True,
        reordered,
        revision,
    )
    assert event is not None
    assert event["data"]["reason"] == "fallback"
