"""The header algebra: canonical form, equality, diff, apply, fold."""

from __future__ import annotations

import pytest
from rejections import rejects

from reqfold.reference.errors import (
    CodecError,
    DeltaBeforeSnapshot,
    DeltaConflict,
    MalformedDelta,
    MalformedEvent,
    MalformedHeader,
    NotJsonValue,
)
from reqfold.reference.header import (
    apply_header_delta,
    canonical_header,
    check_snapshot_data,
    delta_round_trips,
    diff_header,
    diff_system,
    fold_request_header,
    header_equals,
    is_canonical,
    join_system_lines,
    system_lines,
)
from reqfold.reference.revisions import Revision

M = {"model": "m"}


def tool(name: str, description: str = "d") -> dict[str, object]:
    return {"name": name, "description": description, "parameters": {"type": "object"}}


def snapshot(seq: int, header: dict[str, object], reason: str = "initial") -> dict:
    return {
        "type": "request/header",
        "seq": seq,
        "data": {"header": header, "reason": reason},
    }


def delta_event(seq: int, data: dict[str, object]) -> dict:
    return {"type": "request/header-delta", "seq": seq, "data": data}


@pytest.mark.spec("HDR-4", "HDR-5")
def test_canonical_form_drops_empty_fields_and_orders_members() -> None:
    header = {
        "messagePrefix": [],
        "tools": [],
        "system": "",
        "config": {"model": "m", "stop": []},
    }
    assert canonical_header(header) == {"config": {"model": "m", "stop": []}}
    kept = {"tools": [tool("a")], "system": "s", "config": M}
    assert list(canonical_header(kept)) == ["config", "system", "tools"]
    assert not is_canonical(kept)
    assert is_canonical(canonical_header(kept))


@pytest.mark.spec("HDR-2")
def test_canonical_form_rejects_fields_the_revision_does_not_know() -> None:
    suffix = [{"role": "user", "content": []}]
    with rejects(MalformedHeader, "HDR-2"):
        canonical_header(
            {"config": M, "messageSuffix": suffix}, Revision.SESSION_PREFIX
        )
    with rejects(MalformedHeader, "HDR-2"):
        canonical_header({"config": M, "messagePrefix": suffix}, Revision.HEADER_EVENTS)
    assert canonical_header(
        {"config": M, "messageSuffix": suffix}, Revision.REQUEST_MESSAGES
    ) == {"config": M, "messageSuffix": suffix}


@pytest.mark.spec(
    "HDR-3", "HDR-1", "CONFIG-1", "CONFIG-2", "SYS-1", "TOOLS-1", "TOOLS-2", "MSGS-1"
)
@pytest.mark.parametrize(
    ("header", "rule"),
    [
        pytest.param({"config": M, "system": None}, "HDR-3", id="null-system"),
        pytest.param({"config": None}, "HDR-3", id="null-config"),
        pytest.param(
            {"config": {"model": "m", "x": None}}, "HDR-3", id="null-config-member"
        ),
        pytest.param(
            {"config": {"model": "m", "temperature": None}},
            "CONFIG-2",
            id="null-temperature",
        ),
        pytest.param({"system": "s"}, "HDR-1", id="no-config"),
        pytest.param({"config": "m"}, "CONFIG-1", id="string-config"),
        pytest.param({"config": {"temperature": 1}}, "CONFIG-1", id="no-model"),
        pytest.param({"config": {"model": 1}}, "CONFIG-1", id="number-model"),
        pytest.param(
            {"config": {"model": "m", "temperature": True}},
            "CONFIG-2",
            id="bool-temperature",
        ),
        pytest.param(
            {"config": {"model": "m", "temperature": "1"}},
            "CONFIG-2",
            id="string-temperature",
        ),
        pytest.param(
            {"config": {"model": "m", "maxTokens": 1.5}},
            "CONFIG-2",
            id="float-max-tokens",
        ),
        pytest.param(
            {"config": {"model": "m", "stop": "x"}}, "CONFIG-2", id="string-stop"
        ),
        pytest.param(
            {"config": {"model": "m", "stop": ["x", 1]}},
            "CONFIG-2",
            id="non-string-stop",
        ),
        pytest.param({"config": M, "system": ["a"]}, "SYS-1", id="array-system"),
        pytest.param({"config": M, "tools": {}}, "TOOLS-1", id="object-tools"),
        pytest.param(
            {"config": M, "tools": [{"description": "x"}]},
            "TOOLS-1",
            id="nameless-tool",
        ),
        pytest.param({"config": M, "tools": ["a"]}, "TOOLS-1", id="string-tool"),
        pytest.param(
            {"config": M, "tools": [tool("a"), tool("a", "e")]},
            "TOOLS-2",
            id="duplicate-tool",
        ),
        pytest.param({"config": M, "messagePrefix": {}}, "MSGS-1", id="object-prefix"),
        pytest.param(
            {"config": M, "messagePrefix": [{"role": "user"}]},
            "MSGS-1",
            id="message-without-content",
        ),
        pytest.param(
            {"config": M, "messagePrefix": [{"role": 1, "content": []}]},
            "MSGS-1",
            id="message-with-a-number-role",
        ),
        pytest.param(
            {"config": M, "messagePrefix": [{"role": "user", "content": ""}]},
            "MSGS-1",
            id="message-with-string-content",
        ),
        pytest.param([], "HDR-1", id="not-an-object"),
    ],
)
def test_malformed_headers_are_rejected_naming_the_rule(
    header: object, rule: str
) -> None:
    with rejects(MalformedHeader, rule):
        canonical_header(header)  # type: ignore[arg-type]


def test_a_header_holding_a_non_json_number_is_rejected() -> None:
    with rejects(NotJsonValue, "JSON-1"):
        canonical_header({"config": {"model": "m", "temperature": float("nan")}})


@pytest.mark.spec("EQ-1", "EQ-2", "EQ-3", "JSON-2", "JSON-3")
@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"config": M, "system": ""}, {"config": M}, True),
        ({"config": M, "tools": []}, {"config": M}, True),
        ({"config": {"model": "m", "stop": []}}, {"config": M}, False),
        ({"config": {"model": "m", "x": 1}}, {"config": M}, False),
        (
            {"config": {"model": "m", "temperature": 1}},
            {"config": {"model": "m", "temperature": 1.0}},
            True,
        ),
        (
            {"config": {"model": "m", "flag": True}},
            {"config": {"model": "m", "flag": 1}},
            False,
        ),
        (
            {"config": M, "tools": [tool("a"), tool("b")]},
            {"config": M, "tools": [tool("b"), tool("a")]},
            False,
        ),
        (
            {"config": {"model": "m", "temperature": 1}},
            {"config": {"temperature": 1, "model": "m"}},
            False,
        ),
    ],
    ids=[
        "empty-system",
        "empty-tools",
        "stop-empty-vs-absent",
        "extra-config-member",
        "int-vs-float",
        "true-vs-1",
        "tool-reorder",
        "config-member-order",
    ],
)
def test_header_equality(a: dict, b: dict, equal: bool) -> None:
    assert header_equals(a, b) is equal
    assert (diff_header(a, b) is None) is equal


@pytest.mark.spec("SYS-3", "SYS-4", "SYS-2")
@pytest.mark.parametrize(
    ("prev", "next_", "arm"),
    [
        ("k1\nold\nk2\nk3", "k1\nnew A\nnew B\nk2\nk3", (1, 2, ["new A", "new B"])),
        (None, "x\ny", (0, 0, ["x", "y"])),
        ("x\ny", None, (0, 0, [])),
        ("a\na", "a\na\na", (2, 0, ["a"])),
        ("a\na\na", "a\na", (2, 0, [])),
        ("a\nb\na", "a\na", (1, 1, [])),
        ("x", "x\n", (1, 0, [""])),
        ("x\n", "x", (1, 0, [])),
        ("a\r\nb", "a\nb", (0, 1, ["a"])),
    ],
    ids=[
        "mid-prompt",
        "gained",
        "lost",
        "repeated-grow",
        "repeated-shrink",
        "middle-removed",
        "trailing-newline-added",
        "trailing-newline-removed",
        "carriage-return-is-ordinary",
    ],
)
def test_system_arm_is_a_line_edit_that_round_trips(
    prev: str | None, next_: str | None, arm: tuple[int, int, list[str]]
) -> None:
    a = {"config": M} | ({"system": prev} if prev is not None else {})
    b = {"config": M} | ({"system": next_} if next_ is not None else {})
    keep_start, keep_end, insert = arm
    expected = {"keepStart": keep_start, "keepEnd": keep_end, "insert": insert}
    assert diff_system(prev, next_) == expected
    assert diff_header(a, b) == {"system": expected}
    assert apply_header_delta(a, {"system": expected}) == b


@pytest.mark.spec("TOOLS-3", "TOOLS-4", "DELTA-6")
def test_tools_arm_adds_removes_and_changes_by_name() -> None:
    prev = {"config": M, "tools": [tool("keep"), tool("drop"), tool("edit", "before")]}
    next_ = {"config": M, "tools": [tool("keep"), tool("edit", "after"), tool("new")]}
    delta = diff_header(prev, next_)
    assert delta == {
        "tools": {
            "added": [tool("new")],
            "removed": ["drop"],
            "changed": [tool("edit", "after")],
        }
    }
    assert apply_header_delta(prev, delta) == next_


@pytest.mark.spec("DELTA-6", "TOOLS-3")
@pytest.mark.parametrize(
    ("prev_names", "next_names"),
    [(["a", "b"], ["b", "a"]), (["a", "b"], ["a", "new", "b"])],
    ids=["pure-reorder", "insert-in-the-middle"],
)
def test_some_tool_changes_have_a_diff_that_does_not_round_trip(
    prev_names: list[str], next_names: list[str]
) -> None:
    prev = {"config": M, "tools": [tool(n) for n in prev_names]}
    next_ = {"config": M, "tools": [tool(n) for n in next_names]}
    delta = diff_header(prev, next_)
    assert delta is not None
    assert "tools" in delta
    assert not delta_round_trips(prev, delta, next_)


@pytest.mark.spec("DELTA-4", "DELTA-2")
def test_config_arm_replaces_the_config_whole_and_leaves_other_parts_alone() -> None:
    prev = {"config": {"model": "m", "temperature": 0.5}, "system": "s"}
    next_ = {"config": {"model": "m2", "temperature": 0.1}, "system": "s"}
    assert diff_header(prev, next_) == {"config": {"model": "m2", "temperature": 0.1}}


@pytest.mark.spec("DELTA-5", "DELTA-3")
def test_prefix_arm_replaces_whole_and_empty_array_means_absent() -> None:
    p = [{"role": "user", "content": [{"type": "text", "text": "p"}]}]
    bare = {"config": M}
    framed = {"config": M, "messagePrefix": p}
    assert diff_header(bare, framed) == {"messagePrefix": p}
    assert diff_header(framed, bare) == {"messagePrefix": []}
    assert apply_header_delta(framed, {"messagePrefix": []}) == bare


@pytest.mark.spec("DELTA-2")
def test_diff_arms_come_in_spec_order() -> None:
    p = [{"role": "user", "content": []}]
    prev = {"config": M, "system": "a", "tools": [tool("a")]}
    next_ = {
        "config": {"model": "n"},
        "system": "b",
        "tools": [],
        "messagePrefix": p,
        "messageSuffix": p,
    }
    delta = diff_header(prev, next_, Revision.REQUEST_MESSAGES)
    assert delta is not None
    assert list(delta) == [
        "system",
        "tools",
        "config",
        "messagePrefix",
        "messageSuffix",
    ]


@pytest.mark.spec("SYS-5", "TOOLS-5")
@pytest.mark.parametrize(
    ("delta", "rule"),
    [
        ({"system": {"keepStart": 2, "keepEnd": 1, "insert": []}}, "SYS-5"),
        ({"tools": {"added": [], "removed": ["ghost"], "changed": []}}, "TOOLS-5"),
        (
            {"tools": {"added": [], "removed": [], "changed": [tool("ghost")]}},
            "TOOLS-5",
        ),
        ({"tools": {"added": [tool("a")], "removed": [], "changed": []}}, "TOOLS-5"),
        (
            {"tools": {"added": [], "removed": ["a"], "changed": [tool("a")]}},
            "TOOLS-5",
        ),
    ],
    ids=[
        "system-out-of-range",
        "remove-absent",
        "change-absent",
        "add-present",
        "change-removed",
    ],
)
def test_a_delta_that_does_not_fit_its_base_is_a_conflict(
    delta: dict, rule: str
) -> None:
    with rejects(DeltaConflict, rule):
        apply_header_delta(
            {"config": M, "system": "one\ntwo", "tools": [tool("a")]}, delta
        )


def test_a_system_arm_keeping_every_line_fits() -> None:
    base = {"config": M, "system": "one\ntwo"}
    arm = {"keepStart": 1, "keepEnd": 1, "insert": ["mid"]}
    assert apply_header_delta(base, {"system": arm}) == {
        "config": M,
        "system": "one\nmid\ntwo",
    }


@pytest.mark.spec("TOOLS-5", "DELTA-6")
def test_a_conflicting_delta_does_not_round_trip() -> None:
    prev = {"config": M, "tools": [tool("a")]}
    conflicting = {"tools": {"added": [tool("a")], "removed": [], "changed": []}}
    assert not delta_round_trips(prev, conflicting, prev)


@pytest.mark.spec("DELTA-1", "SYS-3", "TOOLS-1", "TOOLS-2", "TOOLS-3", "CONFIG-1")
@pytest.mark.parametrize(
    ("delta", "rule"),
    [
        pytest.param([], "DELTA-1", id="not-an-object"),
        pytest.param({"bogus": 1}, "DELTA-1", id="unknown-arm"),
        pytest.param(
            {"system": {"keepStart": -1, "keepEnd": 0, "insert": []}},
            "SYS-3",
            id="negative-keep-start",
        ),
        pytest.param(
            {"system": {"keepStart": 0, "keepEnd": -1, "insert": []}},
            "SYS-3",
            id="negative-keep-end",
        ),
        pytest.param(
            {"system": {"keepStart": True, "keepEnd": 0, "insert": []}},
            "SYS-3",
            id="bool-keep-start",
        ),
        pytest.param(
            {"system": {"keepStart": 0, "keepEnd": 0.5, "insert": []}},
            "SYS-3",
            id="fractional-keep-end",
        ),
        pytest.param(
            {"system": {"keepStart": 0, "keepEnd": 0, "insert": ["two\nlines"]}},
            "SYS-3",
            id="multi-line-insert",
        ),
        pytest.param(
            {"system": {"keepStart": 0, "keepEnd": 0, "insert": [1]}},
            "SYS-3",
            id="number-insert",
        ),
        pytest.param(
            {"system": {"keepStart": 0, "keepEnd": 0, "insert": "x"}},
            "SYS-3",
            id="string-insert",
        ),
        pytest.param(
            {"system": {"keepStart": 0, "keepEnd": 0}}, "SYS-3", id="partial-system-arm"
        ),
        pytest.param({"system": "x"}, "SYS-3", id="string-system-arm"),
        pytest.param({"tools": {"added": []}}, "TOOLS-3", id="partial-tools-arm"),
        pytest.param({"tools": []}, "TOOLS-3", id="array-tools-arm"),
        pytest.param(
            {"tools": {"added": [{}], "removed": [], "changed": []}},
            "TOOLS-1",
            id="nameless-added-tool",
        ),
        pytest.param(
            {"tools": {"added": [], "removed": [], "changed": [{}]}},
            "TOOLS-1",
            id="nameless-changed-tool",
        ),
        pytest.param(
            {"tools": {"added": [tool("b"), tool("b")], "removed": [], "changed": []}},
            "TOOLS-2",
            id="added-twice",
        ),
        pytest.param(
            {"tools": {"added": [], "removed": [], "changed": [tool("a"), tool("a")]}},
            "TOOLS-2",
            id="changed-twice",
        ),
        pytest.param(
            {"tools": {"added": [], "removed": "a", "changed": []}},
            "TOOLS-3",
            id="string-removed",
        ),
        pytest.param(
            {"tools": {"added": [], "removed": [1], "changed": []}},
            "TOOLS-3",
            id="number-removed",
        ),
        pytest.param(
            {"tools": {"added": [], "removed": ["a", "a"], "changed": []}},
            "TOOLS-3",
            id="removed-twice",
        ),
        pytest.param(
            {"config": {"temperature": 1}}, "CONFIG-1", id="config-without-model"
        ),
        pytest.param(
            {"config": {"model": "m", "maxTokens": "9"}},
            "CONFIG-2",
            id="bad-max-tokens",
        ),
        pytest.param({"messageSuffix": []}, "DELTA-1", id="suffix-in-session-prefix"),
        pytest.param({"messagePrefix": {}}, "MSGS-1", id="object-prefix"),
    ],
)
def test_malformed_deltas_are_rejected_naming_the_rule(
    delta: object, rule: str
) -> None:
    with rejects(MalformedDelta, rule):
        apply_header_delta({"config": M, "tools": [tool("a")]}, delta)  # type: ignore[arg-type]


@pytest.mark.spec("DELTA-1", "JSON-1")
def test_a_delta_holding_a_non_json_number_is_rejected() -> None:
    with rejects(NotJsonValue, "JSON-1"):
        apply_header_delta({"config": M}, {"config": {"model": "m", "t": float("nan")}})


@pytest.mark.spec("FOLD-1")
def test_fold_replays_snapshots_and_deltas_skipping_other_events() -> None:
    v1 = {"config": M, "system": "one"}
    events = [
        {"type": "turn/start", "seq": 0, "data": {}},
        snapshot(1, v1),
        {"type": "plugin/unknown", "seq": 2, "data": {"x": 1}},
        delta_event(3, {"system": {"keepStart": 1, "keepEnd": 0, "insert": ["two"]}}),
    ]
    assert fold_request_header(events) == {"config": M, "system": "one\ntwo"}
    resumed = [*events, snapshot(4, {"config": {"model": "x"}}, "resume")]
    assert fold_request_header(resumed) == {"config": {"model": "x"}}
    assert fold_request_header(events[:1]) is None


@pytest.mark.spec("FOLD-2")
def test_a_delta_before_any_snapshot_is_a_corrupt_log_naming_its_seq() -> None:
    with rejects(DeltaBeforeSnapshot, "FOLD-2", seq=1):
        fold_request_header(
            [
                {"type": "turn/start", "seq": 0, "data": {}},
                delta_event(1, {"config": M}),
            ]
        )


@pytest.mark.spec("FOLD-3")
def test_fold_continues_from_a_folded_state() -> None:
    first = [snapshot(0, {"config": M})]
    second = [delta_event(1, {"config": {"model": "n"}})]
    state = fold_request_header(first)
    assert fold_request_header(second, state) == fold_request_header(first + second)


@pytest.mark.spec("FOLD-1", "DELTA-3")
def test_fold_and_apply_never_mutate_their_inputs() -> None:
    prev = {"config": M, "tools": [tool("a")], "system": "s"}
    delta = {"tools": {"added": [tool("b")], "removed": [], "changed": []}}
    before = repr((prev, delta))
    apply_header_delta(prev, delta)
    fold_request_header([snapshot(0, prev), delta_event(1, delta)])
    assert repr((prev, delta)) == before


@pytest.mark.spec("FOLD-1", "JSON-1")
def test_a_non_json_value_in_a_snapshot_is_reported_with_its_seq() -> None:
    bad = {"config": {"model": "m", "temperature": float("inf")}}
    with rejects(NotJsonValue, "JSON-1", seq=4):
        fold_request_header([snapshot(4, bad)])


@pytest.mark.spec("FOLD-1", "SNAP-1", "HDR-2", "TOOLS-5", "DELTA-1")
@pytest.mark.parametrize(
    ("event", "kind", "rule"),
    [
        pytest.param(
            {"type": "request/header", "seq": 3, "data": {"header": {"config": M}}},
            MalformedEvent,
            "SNAP-1",
            id="snapshot-without-reason",
        ),
        pytest.param(
            snapshot(3, {"config": M}, reason="restart"),
            MalformedEvent,
            "SNAP-1",
            id="snapshot-with-an-unknown-reason",
        ),
        pytest.param(
            {"type": "request/header", "seq": 3, "data": []},
            MalformedEvent,
            "SNAP-1",
            id="snapshot-data-not-an-object",
        ),
        pytest.param(
            snapshot(3, {"config": M, "bogus": 1}),
            MalformedHeader,
            "HDR-2",
            id="snapshot-header-with-an-unknown-field",
        ),
        pytest.param(
            delta_event(3, {"tools": {"added": [], "removed": ["x"], "changed": []}}),
            DeltaConflict,
            "TOOLS-5",
            id="conflicting-delta",
        ),
        pytest.param(
            delta_event(3, {"bogus": 1}),
            MalformedDelta,
            "DELTA-1",
            id="malformed-delta",
        ),
    ],
)
def test_fold_errors_name_the_rule_and_the_seq_of_the_event(
    event: dict, kind: type[CodecError], rule: str
) -> None:
    with rejects(kind, rule, seq=3):
        fold_request_header([snapshot(0, {"config": M}), event])


@pytest.mark.spec("FOLD-2", "LOG-1")
@pytest.mark.parametrize("seq", ["1", 1.5, True, None], ids=repr)
def test_a_fold_error_never_names_a_seq_that_is_not_an_integer(seq: object) -> None:
    with rejects(DeltaBeforeSnapshot, "FOLD-2"):
        fold_request_header([{"type": "request/header-delta", "seq": seq, "data": {}}])
    with rejects(MalformedEvent, "SNAP-1"):
        fold_request_header([{"type": "request/header", "seq": seq, "data": {}}])


@pytest.mark.spec("FOLD-2")
def test_an_integral_float_seq_is_named_as_an_integer() -> None:
    with rejects(DeltaBeforeSnapshot, "FOLD-2", seq=2) as caught:
        fold_request_header([delta_event(2.0, {})])  # type: ignore[arg-type]
    assert type(caught.value.seq) is int


@pytest.mark.spec("HDR-4", "HDR-2")
def test_is_canonical_judges_in_the_revision_it_is_given() -> None:
    suffix = [{"role": "user", "content": []}]
    framed = {"config": M, "messageSuffix": suffix}
    assert is_canonical(framed, Revision.REQUEST_MESSAGES)
    assert not is_canonical(
        {"messageSuffix": suffix, "config": M}, Revision.REQUEST_MESSAGES
    )
    with rejects(MalformedHeader, "HDR-2"):
        is_canonical(framed, Revision.SESSION_PREFIX)
    with rejects(MalformedHeader, "HDR-2"):
        is_canonical({"config": M, "messagePrefix": suffix}, Revision.HEADER_EVENTS)


@pytest.mark.spec("SYS-2")
def test_no_lines_join_to_an_absent_prompt_and_an_absent_prompt_has_no_lines() -> None:
    assert join_system_lines([]) is None
    assert join_system_lines([""]) == ""
    assert system_lines(None) == []
    assert system_lines("") == [""]
    assert system_lines("a\r\nb\n") == ["a\r", "b", ""]


@pytest.mark.spec("FOLD-3", "HDR-2")
def test_fold_continues_from_a_state_of_the_revision_it_is_given() -> None:
    revision = Revision.REQUEST_MESSAGES
    suffix = [{"role": "user", "content": []}]
    state = {"config": M, "messageSuffix": suffix}
    assert fold_request_header([], state, revision) == state
    assert fold_request_header(
        [delta_event(1, {"messageSuffix": []})], state, revision
    ) == {"config": M}
    with rejects(MalformedHeader, "HDR-2"):
        fold_request_header([], state, Revision.SESSION_PREFIX)


@pytest.mark.spec("SNAP-1")
@pytest.mark.parametrize(
    "data",
    [
        [],
        {"header": {"config": M}},
        {"header": {"config": M}, "reason": "restart"},
        {"header": {"config": M}, "reason": "initial", "extra": 1},
    ],
    ids=["not-an-object", "no-reason", "unknown-reason", "extra-member"],
)
def test_snapshot_data_errors_name_the_seq_they_are_given(data: object) -> None:
    with rejects(MalformedEvent, "SNAP-1", seq=3):
        check_snapshot_data(data, seq=3)
    with rejects(MalformedEvent, "SNAP-1"):
        check_snapshot_data(data, seq=None)


@pytest.mark.spec("SNAP-1")
@pytest.mark.parametrize("reason", ["initial", "resume", "fallback"])
def test_snapshot_data_gives_back_its_header(reason: str) -> None:
    header = {"config": M}
    assert check_snapshot_data({"header": header, "reason": reason}, seq=0) is header
