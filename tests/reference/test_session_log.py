"""The session log: envelope rules, surface, derived history, live header."""

from __future__ import annotations

import pytest
from messages import text
from rejections import rejects

from reqfold.reference.errors import (
    DeltaBeforeSnapshot,
    MalformedEvent,
    NotJsonValue,
    SurfaceError,
)
from reqfold.reference.messages import derive_event_message
from reqfold.reference.session_log import SessionLog

USER = {"kind": "user"}


def append_user(log: SessionLog, value: str) -> dict:
    return log.append(
        "user/message",
        {"content": [text(value)], "source": USER},
        time=0,
        surface_op="append",
    )


@pytest.mark.spec("LOG-1", "LOG-2")
def test_append_assigns_contiguous_seqs_and_envelope_member_order() -> None:
    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=5)
    event = append_user(log, "hi")
    assert [e["seq"] for e in log] == [0, 1]
    assert list(event) == ["type", "seq", "time", "data", "surfaceOp"]
    sourced = log.append(
        "tool/result",
        {"callId": "c", "content": [], "isError": False},
        time=0,
        surface_op="append",
        source_event_seqs=[1],
    )
    assert list(sourced) == [
        "type",
        "seq",
        "time",
        "data",
        "sourceEventSeqs",
        "surfaceOp",
    ]


@pytest.mark.spec("LOG-3", "JSON-1")
@pytest.mark.parametrize(
    "data",
    [
        {"x": float("nan")},
        {"x": float("inf")},
        {"x": (1, 2)},
        {"x": {1: "a"}},
        {"x": object()},
    ],
    ids=["nan", "infinity", "tuple", "int-key", "object"],
)
def test_append_rejects_non_json_data_and_logs_nothing(data: dict) -> None:
    log = SessionLog()
    with rejects(NotJsonValue, "JSON-1", seq=0):
        log.append("note", data, time=0)
    assert len(log) == 0


@pytest.mark.spec("JSON-1")
def test_append_rejects_a_cycle() -> None:
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with rejects(NotJsonValue, "JSON-1", seq=0):
        SessionLog().append("note", {"x": cyclic}, time=0)


@pytest.mark.spec("LOG-4")
def test_surface_events_need_a_surface_op_and_others_must_not_carry_one() -> None:
    log = SessionLog()
    with rejects(MalformedEvent, "LOG-4", seq=0):
        log.append("user/message", {"content": []}, time=0)
    with rejects(MalformedEvent, "LOG-4", seq=0):
        log.append("turn/start", {"turn": 1}, time=0, surface_op="append")
    assert len(log) == 0


@pytest.mark.spec("LOG-5")
def test_source_event_seqs_must_name_distinct_earlier_events() -> None:
    log = SessionLog()
    append_user(log, "a")
    for sources in ([], [1], [0, 0], [-1]):
        with rejects(MalformedEvent, "LOG-5", seq=1):
            log.append(
                "user/message",
                {"content": []},
                time=0,
                surface_op="append",
                source_event_seqs=sources,
            )


@pytest.mark.spec("LOG-2", "LOG-6")
def test_seeding_validates_every_event_as_if_appended() -> None:
    good = {"type": "note", "seq": 0, "time": 0, "data": {}}
    assert len(SessionLog([good])) == 1
    with rejects(MalformedEvent, "LOG-2", seq=2):
        SessionLog([good, {"type": "note", "seq": 2, "time": 0, "data": {}}])
    with rejects(MalformedEvent, "LOG-1", seq=0):
        SessionLog([{**good, "extra": 1}])
    with rejects(NotJsonValue, "JSON-1", seq=1):
        SessionLog([good, {**good, "seq": 1, "data": {"x": float("nan")}}])


@pytest.mark.spec("LOG-6", "FOLD-2")
def test_a_seed_with_a_corrupt_header_fold_loads_and_fails_when_the_fold_is_read() -> (
    None
):
    log = SessionLog(
        [{"type": "request/header-delta", "seq": 0, "time": 0, "data": {}}]
    )
    with rejects(DeltaBeforeSnapshot, "FOLD-2", seq=0):
        log.request_header()


@pytest.mark.spec("SURF-1", "SURF-2", "SURF-3", "DERIVE-1")
def test_replace_shadows_a_range_by_position_and_derivation_follows() -> None:
    log = SessionLog()
    for value in ("a", "b", "c"):
        append_user(log, value)
    summary = log.append(
        "user/message",
        {
            "content": [text("summary")],
            "source": {"kind": "plugin", "plugin": "compact"},
        },
        time=0,
        surface_op={"op": "replace", "start": 0, "end": 1},
        source_event_seqs=[0, 1],
    )
    assert log.surface == [summary["seq"], 2]
    assert [m["content"][0]["text"] for m in log.derive_messages()] == ["summary", "c"]
    append_user(log, "d")
    assert [m["content"][0]["text"] for m in log.derive_messages()] == [
        "summary",
        "c",
        "d",
    ]


@pytest.mark.spec("SURF-2")
@pytest.mark.parametrize(
    ("start", "end"),
    [(7, 0), (0, 7), (1, 0)],
    ids=["start-missing", "end-missing", "inverted"],
)
def test_an_invalid_replace_is_rejected_and_logs_nothing(start: int, end: int) -> None:
    log = SessionLog()
    append_user(log, "a")
    append_user(log, "b")
    with rejects(SurfaceError, "SURF-2", seq=2):
        log.append(
            "user/message",
            {"content": []},
            time=0,
            surface_op={"op": "replace", "start": start, "end": end},
        )
    assert len(log) == 2


@pytest.mark.spec("DERIVE-2")
def test_projection_of_each_surface_type() -> None:
    def event(kind: str, data: dict) -> dict:
        return {"type": kind, "seq": 0, "time": 0, "data": data, "surfaceOp": "append"}

    assert derive_event_message(event("assistant/message", {"content": []})) is None
    assert derive_event_message(
        event(
            "tool/result",
            {
                "callId": "c1",
                "content": [text("out")],
                "isError": True,
                "error": {"name": "E"},
            },
        )
    ) == {
        "role": "user",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "content": [text("out")],
                "isError": True,
            }
        ],
    }
    assert derive_event_message(
        event(
            "context/message",
            {"content": [text("cwd")], "source": {"kind": "plugin", "plugin": "x"}},
        )
    ) == {
        "role": "user",
        "content": [
            {"type": "text", "text": '<context source="plugin">'},
            {"type": "text", "text": "cwd"},
            {"type": "text", "text": "</context>"},
        ],
    }
    steering = derive_event_message(
        event("steering/message", {"content": [], "source": USER})
    )
    assert steering is not None
    assert steering["content"][0]["text"] == '<steering source="user">'


@pytest.mark.spec("DERIVE-1", "LOG-7")
def test_derivation_skips_unknown_types_and_replaying_a_log_reproduces_it() -> None:
    log = SessionLog()
    append_user(log, "a")
    log.append("plugin/whatever", {"x": 1}, time=0)
    log.append(
        "assistant/message", {"content": [text("b")]}, time=0, surface_op="append"
    )
    replayed = SessionLog(log.events)
    assert replayed.derive_messages() == log.derive_messages()
    assert [m["role"] for m in log.derive_messages()] == ["user", "assistant"]


@pytest.mark.spec("LOG-3")
def test_the_log_keeps_its_own_copy_of_appended_data() -> None:
    log = SessionLog()
    data = {"content": [text("a")], "source": USER}
    log.append("user/message", data, time=0, surface_op="append")
    data["content"][0]["text"] = "changed"
    assert log.derive_messages()[0]["content"][0]["text"] == "a"


@pytest.mark.spec("FOLD-1", "FOLD-3")
def test_the_live_header_folds_incrementally_as_events_arrive() -> None:
    log = SessionLog()
    assert log.request_header() is None
    log.append(
        "request/header",
        {"header": {"config": {"model": "m"}}, "reason": "initial"},
        time=0,
    )
    assert log.request_header() == {"config": {"model": "m"}}
    log.append("request/header-delta", {"config": {"model": "n"}}, time=0)
    assert log.request_header() == {"config": {"model": "n"}}


@pytest.mark.spec("LOG-6", "JSON-1")
def test_deeply_nested_data_is_checked_copied_and_seeded_without_recursion_errors() -> (
    None
):
    deep: dict = {}
    node = deep
    for _ in range(50_000):
        node["x"] = {}
        node = node["x"]
    log = SessionLog()
    log.append("note", deep, time=0)
    log.append_event({"type": "note", "seq": 1, "time": 0, "data": deep})
    assert len(SessionLog(log.events)) == 2


@pytest.mark.spec("SURF-1", "JSON-3")
def test_a_replace_op_is_read_by_member_name_not_member_order() -> None:
    log = SessionLog()
    append_user(log, "a")
    log.append(
        "user/message",
        {"content": [text("b")]},
        time=0,
        surface_op={"end": 0, "start": 0, "op": "replace"},
        source_event_seqs=[0],
    )
    assert log.surface == [1]


@pytest.mark.spec("JSON-1", "LOG-3")
def test_a_lone_surrogate_in_a_string_or_key_is_rejected_and_nothing_is_logged() -> (
    None
):
    log = SessionLog()
    for data in ({"name": "file-\udc80.txt"}, {"\ud800": 1}):
        with rejects(NotJsonValue, "JSON-1", seq=0):
            log.append("note", data, time=0)
    assert len(log) == 0


GOOD = {"type": "note", "seq": 0, "time": 0, "data": {}}


@pytest.mark.spec("LOG-1", "LOG-6")
@pytest.mark.parametrize(
    "event", [[1], "note", None, 0], ids=["list", "string", "null", "number"]
)
def test_an_event_that_is_not_an_object_is_rejected_at_its_position(
    event: object,
) -> None:
    with rejects(MalformedEvent, "LOG-1", seq=1):
        SessionLog([GOOD, event])  # type: ignore[list-item]


BROKEN_ENVELOPES = {
    "empty-type": ({"type": ""}, "LOG-1"),
    "number-type": ({"type": 5}, "LOG-1"),
    "no-type": ({"type": None}, "LOG-1"),
    "string-seq": ({"seq": "1"}, "LOG-1"),
    "fractional-seq": ({"seq": 1.5}, "LOG-1"),
    "boolean-seq": ({"seq": True}, "LOG-1"),
    "no-seq": ({"seq": None}, "LOG-1"),
    "negative-time": ({"time": -1}, "LOG-1"),
    "string-time": ({"time": "0"}, "LOG-1"),
    "fractional-time": ({"time": 0.5}, "LOG-1"),
    "no-time": ({"time": None}, "LOG-1"),
    "list-data": ({"data": []}, "LOG-3"),
    "string-data": ({"data": "{}"}, "LOG-3"),
    "no-data": ({"data": None}, "LOG-3"),
}


@pytest.mark.spec("LOG-1", "LOG-3", "LOG-6")
@pytest.mark.parametrize(
    ("change", "rule"), BROKEN_ENVELOPES.values(), ids=BROKEN_ENVELOPES.keys()
)
def test_a_malformed_envelope_member_is_rejected_naming_its_rule_and_position(
    change: dict, rule: str
) -> None:
    # A member given as None is left out of the event altogether.
    event = {**GOOD, "seq": 1, **change}
    event = {key: value for key, value in event.items() if value is not None}
    with rejects(MalformedEvent, rule, seq=1):
        SessionLog([GOOD, event])
    log = SessionLog([GOOD])
    with rejects(MalformedEvent, rule, seq=1):
        log.append_event(event)
    assert len(log) == 1


@pytest.mark.spec("LOG-1")
@pytest.mark.parametrize(
    ("seq", "named"),
    [(5, 5), (5.0, 5), ("7", 1), (None, 1)],
    ids=["integer", "integral-float", "string", "missing"],
)
def test_an_envelope_error_before_the_seq_check_names_the_seq_the_event_claims(
    seq: object, named: int
) -> None:
    # The event claims a seq: an unknown member or a bad type is reported
    # there; a seq that is not an integer cannot be named, so the position is.
    claimed = {k: v for k, v in {**GOOD, "seq": seq}.items() if v is not None}
    for broken in ({**claimed, "extra": 1}, {**claimed, "type": ""}):
        with rejects(MalformedEvent, "LOG-1", seq=named) as caught:
            SessionLog([GOOD, broken])
        assert type(caught.value.seq) is int


@pytest.mark.spec("SURF-1")
@pytest.mark.parametrize(
    "op",
    [
        "prepend",
        ["append"],
        {"op": "append"},
        {"op": "replace", "start": 0},
        {"op": "replace", "start": 0, "end": 0, "extra": 1},
        {"op": "swap", "start": 0, "end": 0},
        {"op": "replace", "start": "0", "end": 0},
        {"op": "replace", "start": 0, "end": 0.5},
        {"op": "replace", "start": True, "end": 0},
    ],
    ids=[
        "unknown-name",
        "list",
        "object-append",
        "no-end",
        "extra-member",
        "unknown-op",
        "string-start",
        "fractional-end",
        "boolean-start",
    ],
)
def test_a_malformed_surface_op_is_rejected_and_logs_nothing(op: object) -> None:
    log = SessionLog()
    append_user(log, "a")
    with rejects(MalformedEvent, "SURF-1", seq=1):
        log.append("user/message", {"content": []}, time=0, surface_op=op)
    assert len(log) == 1
    assert log.surface == [0]


@pytest.mark.spec("LOG-4")
def test_a_non_surface_event_must_not_carry_source_event_seqs_even_valid_ones() -> None:
    log = SessionLog()
    append_user(log, "a")
    with rejects(MalformedEvent, "LOG-4", seq=1):
        log.append("note", {}, time=0, source_event_seqs=[0])
    assert len(log) == 1


@pytest.mark.spec("LOG-3", "JSON-1")
def test_a_complete_event_appended_with_non_json_data_is_rejected_and_not_logged() -> (
    None
):
    log = SessionLog()
    with rejects(NotJsonValue, "JSON-1", seq=0):
        log.append_event({**GOOD, "data": {"x": float("nan")}})
    assert len(log) == 0


@pytest.mark.spec("LOG-6", "JSON-1")
@pytest.mark.parametrize(
    "change",
    [{"time": float("nan")}, {"seq": float("inf")}, {1: "x"}],
    ids=["nan-time", "infinite-seq", "number-key"],
)
def test_a_seeded_event_that_is_not_a_json_value_is_rejected_as_such(
    change: dict,
) -> None:
    # Checked as a JSON value before its envelope is read, so the diagnosis
    # is JSON-1 rather than the envelope rule the value also breaks.
    with rejects(NotJsonValue, "JSON-1", seq=1):
        SessionLog([GOOD, {**GOOD, "seq": 1, **change}])


@pytest.mark.spec("DERIVE-1", "DERIVE-2")
def test_a_surface_event_that_projects_to_nothing_stays_out_of_the_history() -> None:
    log = SessionLog()
    append_user(log, "a")
    log.append("assistant/message", {"content": []}, time=0, surface_op="append")
    append_user(log, "b")
    assert log.surface == [0, 1, 2]
    assert [m["content"][0]["text"] for m in log.derive_messages()] == ["a", "b"]


@pytest.mark.spec("LOG-1", "JSON-1")
def test_a_type_holding_a_lone_surrogate_is_rejected_and_nothing_is_logged() -> None:
    log = SessionLog()
    with rejects(NotJsonValue, "JSON-1", seq=0):
        log.append("note-\ud800", {}, time=0)
    with rejects(NotJsonValue, "JSON-1", seq=0):
        log.append_event({**GOOD, "type": "note-\udc80"})
    assert len(log) == 0


@pytest.mark.spec("SURF-2", "SURF-3", "JSON-5")
def test_seqs_spelt_as_integral_floats_are_integers_on_the_surface_and_in_errors() -> (
    None
):
    def event(seq: float, op: object) -> dict:
        return {
            "type": "user/message",
            "seq": seq,
            "time": 0,
            "data": {},
            "surfaceOp": op,
        }

    log = SessionLog([event(0, "append"), event(1.0, "append")])
    assert [type(seq) for seq in log.surface] == [int, int]
    with rejects(SurfaceError, "SURF-2", seq=2) as caught:
        log.append_event(event(2.0, {"op": "replace", "start": 7, "end": 0}))
    assert type(caught.value.seq) is int
