"""The header algebra: canonical form, equality, diff, apply, fold."""

from __future__ import annotations

import pytest

from reference.errors import (
    DeltaBeforeSnapshot,
    DeltaConflict,
    MalformedDelta,
    MalformedHeader,
    NotJsonValue,
)
from reference.header import (
    apply_header_delta,
    canonical_header,
    delta_round_trips,
    diff_header,
    diff_system,
    fold_request_header,
    header_equals,
    is_canonical,
)
from reference.revisions import Revision

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
    with pytest.raises(MalformedHeader, match="messageSuffix"):
        canonical_header(
            {"config": M, "messageSuffix": suffix}, Revision.SESSION_PREFIX
        )
    with pytest.raises(MalformedHeader, match="messagePrefix"):
        canonical_header({"config": M, "messagePrefix": suffix}, Revision.HEADER_EVENTS)
    assert canonical_header(
        {"config": M, "messageSuffix": suffix}, Revision.REQUEST_MESSAGES
    ) == {"config": M, "messageSuffix": suffix}


@pytest.mark.spec(
    "HDR-3", "HDR-1", "CONFIG-1", "CONFIG-2", "SYS-1", "TOOLS-1", "TOOLS-2"
)
@pytest.mark.parametrize(
    "header",
    [
        pytest.param({"config": M, "system": None}, id="null-system"),
        pytest.param(
            {"config": {"model": "m", "temperature": None}}, id="null-config-member"
        ),
        pytest.param({"system": "s"}, id="no-config"),
        pytest.param({"config": {"temperature": 1}}, id="no-model"),
        pytest.param(
            {"config": {"model": "m", "temperature": True}}, id="bool-temperature"
        ),
        pytest.param(
            {"config": {"model": "m", "maxTokens": 1.5}}, id="float-max-tokens"
        ),
        pytest.param({"config": {"model": "m", "stop": "x"}}, id="string-stop"),
        pytest.param({"config": M, "system": ["a"]}, id="array-system"),
        pytest.param(
            {"config": M, "tools": [{"description": "x"}]}, id="nameless-tool"
        ),
        pytest.param(
            {"config": M, "tools": [tool("a"), tool("a", "e")]}, id="duplicate-tool"
        ),
        pytest.param([], id="not-an-object"),
    ],
)
def test_malformed_headers_are_rejected(header: object) -> None:
    with pytest.raises(MalformedHeader):
        canonical_header(header)  # type: ignore[arg-type]


@pytest.mark.spec("JSON-1")
def test_a_header_holding_a_non_json_number_is_rejected() -> None:
    with pytest.raises(NotJsonValue):
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
    "delta",
    [
        {"system": {"keepStart": 2, "keepEnd": 1, "insert": []}},
        {"tools": {"added": [], "removed": ["ghost"], "changed": []}},
        {"tools": {"added": [], "removed": [], "changed": [tool("ghost")]}},
        {"tools": {"added": [tool("a")], "removed": [], "changed": []}},
        {"tools": {"added": [], "removed": ["a"], "changed": [tool("a")]}},
    ],
    ids=[
        "system-out-of-range",
        "remove-absent",
        "change-absent",
        "add-present",
        "change-removed",
    ],
)
def test_a_delta_that_does_not_fit_its_base_is_a_conflict(delta: dict) -> None:
    with pytest.raises(DeltaConflict):
        apply_header_delta(
            {"config": M, "system": "one\ntwo", "tools": [tool("a")]}, delta
        )


@pytest.mark.spec("DELTA-1", "SYS-3", "TOOLS-3")
@pytest.mark.parametrize(
    "delta",
    [
        {"bogus": 1},
        {"system": {"keepStart": -1, "keepEnd": 0, "insert": []}},
        {"system": {"keepStart": True, "keepEnd": 0, "insert": []}},
        {"system": {"keepStart": 0, "keepEnd": 0, "insert": ["two\nlines"]}},
        {"tools": {"added": []}},
        {"config": {"temperature": 1}},
        {"messageSuffix": []},
    ],
    ids=[
        "unknown-arm",
        "negative-keep",
        "bool-keep",
        "multi-line-insert",
        "partial-tools-arm",
        "config-without-model",
        "suffix-in-session-prefix",
    ],
)
def test_malformed_deltas_are_rejected(delta: dict) -> None:
    with pytest.raises(MalformedDelta):
        apply_header_delta({"config": M}, delta)


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
    with pytest.raises(DeltaBeforeSnapshot) as caught:
        fold_request_header(
            [
                {"type": "turn/start", "seq": 0, "data": {}},
                delta_event(1, {"config": M}),
            ]
        )
    assert caught.value.seq == 1
    assert "seq 1" in str(caught.value)


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
    with pytest.raises(NotJsonValue) as caught:
        fold_request_header([snapshot(4, bad)])
    assert caught.value.seq == 4
