"""Logs the reference writer produces pass the checker, and their requests match."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
import pytest
from example_counts import scaled_examples
from hypothesis import example, given, settings, strategies as st

from reqfold.conformance.check import check_lines, read_captures
from reqfold.conformance.check.header_rules import (
    _SHAPES,
    _Config,
    fast_canonical,
    fold_diff,
    proven_json,
)
from reqfold.reference.errors import CodecError
from reqfold.reference.header import (
    apply_header_delta,
    apply_to_canonical,
    canonical_header,
    diff_canonical,
    diff_header,
)
from reqfold.reference.json_values import check_json_value
from reqfold.reference.request import build_chat_body, request_messages
from reqfold.reference.revisions import Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.jsonl import dump_line, make_storage_line
from reqfold.reference.writer import record_header

NAMES = ("grep", "list_dir", "read_file", "write_file")


def tools() -> st.SearchStrategy[list[dict[str, Any]]]:
    schema = st.builds(
        lambda name, description: {
            "name": name,
            "description": description,
            "parameters": {"type": "object"},
        },
        st.sampled_from(NAMES),
        st.sampled_from(["v1", "v2"]),
    )
    return st.lists(schema, max_size=4, unique_by=lambda tool: tool["name"])


HEADERS_WITHOUT_PREFIX = st.builds(
    lambda c, s, t: {"config": c, "system": s, "tools": t},
    st.fixed_dictionaries(
        {"model": st.sampled_from(["m1", "m2"])},
        optional={"temperature": st.sampled_from([0.0, 0.5]), "stop": st.just([])},
    ),
    st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=4).map("\n".join),
    tools(),
)
"""A header's config, system and tools: `sessions` adds each instance's prefix."""


def headers(prefix: list[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda header: {**header, "messagePrefix": prefix}, HEADERS_WITHOUT_PREFIX
    )


PREFIXES = st.lists(
    st.builds(
        lambda text: {"role": "user", "content": [{"type": "text", "text": text}]},
        st.sampled_from(["<catalog>", "<rules>"]),
    ),
    max_size=2,
)
HEADER_LISTS = st.lists(HEADERS_WITHOUT_PREFIX, min_size=1, max_size=4)


@st.composite
def sessions(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """Instances, each a list of the headers its requests carry.

    Draws only from strategies built once: building `headers(prefix)` per
    instance cost hypothesis more than the draws.
    """
    instances = []
    for _ in range(draw(st.integers(1, 3))):
        prefix = draw(PREFIXES)
        instances.append(
            [{**header, "messagePrefix": prefix} for header in draw(HEADER_LISTS)]
        )
    return instances


def run(instances: list[list[dict[str, Any]]]) -> tuple[list[bytes], list[bytes]]:
    """Drive the reference writer: one turn of one step per request."""
    log = SessionLog()
    captures: list[bytes] = []
    turn = 0
    for headers_of_instance in instances:
        logged = False
        for header in headers_of_instance:
            turn += 1
            log.append("turn/start", {"turn": turn}, time=turn)
            log.append(
                "user/message",
                {"content": [{"type": "text", "text": f"q{turn}"}]},
                time=turn,
                surface_op="append",
            )
            boundary = log.derive_messages()
            log.append("step/start", {"turn": turn, "step": 1}, time=turn)
            event = record_header(log.request_header(), logged, header)
            if event is not None:
                log.append(event["type"], event["data"], time=turn)
                logged = True
            folded = log.request_header()
            assert folded is not None
            body = build_chat_body(folded, request_messages(folded, boundary))
            captures.append(json.dumps({"index": turn - 1, "body": body}).encode())
            answer = [{"type": "text", "text": f"a{turn}"}]
            log.append(
                "assistant/message",
                {"content": answer},
                time=turn,
                surface_op="append",
            )
            log.append("step/end", {"turn": turn, "step": 1}, time=turn)
            log.append("turn/end", {"turn": turn, "reason": {}}, time=turn)
    lines = [dump_line(make_storage_line("s", 0))] + [dump_line(e) for e in log]
    return [line.encode() for line in lines], captures


@pytest.mark.spec(
    "WRITER-1",
    "WRITER-2",
    "WRITER-3",
    "WRITER-4",
    "WRITER-5",
    "WRITER-6",
    "PREFIX-2",
    "REQ-1",
    "REQ-2",
    "REQ-5",
    "CHECK-1",
)
@settings(max_examples=scaled_examples(150), deadline=None)
@given(sessions())
def test_writer_logs_pass_and_their_requests_match(
    instances: list[list[dict[str, Any]]],
) -> None:
    lines, captures = run(instances)
    report = check_lines(lines, captures=read_captures(captures), strict=True)
    # Random headers may change one part in the same place on consecutive
    # requests: the very pattern CACHE-2 warns of (the opening varies per
    # request), which is about what the opening holds, not how it is logged.
    assert all(f.level == "SHOULD" for f in report.findings if f.rule == "CACHE-2")
    assert [f for f in report.findings if f.rule != "CACHE-2"] == []
    assert report.summary.requests_matched == len(captures)


REVISIONS = st.sampled_from(list(Revision))


@pytest.mark.spec("DELTA-2", "DELTA-3", "DELTA-6")
@settings(max_examples=scaled_examples(300), deadline=None)
@given(headers([]), headers([]), st.data())
def test_the_checkers_diff_and_apply_equal_the_references(
    a: dict[str, Any], b: dict[str, Any], data: st.DataObject
) -> None:
    revision = data.draw(REVISIONS)
    for header in (a, b):
        if revision is Revision.HEADER_EVENTS:
            header.pop("messagePrefix")
    prev, next_ = canonical_header(a, revision), canonical_header(b, revision)
    assert fast_canonical(a, revision) == prev
    delta = diff_header(prev, next_, revision)
    assert diff_canonical(prev, next_, revision) == delta
    fast = fold_diff(prev, next_, revision)
    assert fast == delta
    assert list(fast or {}) == list(delta or {})
    if delta is None:
        return
    try:
        expected = apply_header_delta(prev, delta, revision)
    except CodecError as error:
        with pytest.raises(type(error)):
            apply_to_canonical(prev, delta, revision)
        return
    assert apply_to_canonical(prev, delta, revision) == expected


LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities too: JSON-1 refuses them
    | st.text(max_size=3)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=3)
    | st.sampled_from(["a\ud800", "\udc00", "null", "a:null"])
)
"""Leaves of random headers: lone surrogates and non-finite numbers included."""


@pytest.mark.slow  # many examples: out of the developer's loop
@pytest.mark.spec("HDR-1", "HDR-2", "HDR-3", "TOOLS-2", "MSGS-1", "JSON-1")
@settings(max_examples=scaled_examples(500))
@given(
    st.recursive(
        LEAVES,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "config",
                        "system",
                        "tools",
                        "messagePrefix",
                        "messageSuffix",
                        "model",
                        "temperature",
                        "maxTokens",
                        "name",
                        "role",
                        "content",
                        "x",
                        "\ud800",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    ),
    REVISIONS,
)
def test_fast_canonical_is_none_or_the_references_canonical_form(
    value: Any, revision: Revision
) -> None:
    fast = fast_canonical(value, revision)
    try:
        reference = canonical_header(value, revision)
    except CodecError:
        assert fast is None
        return
    assert fast is None or fast == reference


JSON_TEXT_VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(max_size=2) | st.sampled_from(["\ud800", "a\udc00"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=12,
)
"""Values the strict reader may build from JSON text: string keys, no
tuples or cycles, but NaN, infinities and lone surrogates anywhere."""


@pytest.mark.slow  # many examples: out of the developer's loop
@pytest.mark.spec("JSON-1")
@settings(max_examples=scaled_examples(500))
@given(JSON_TEXT_VALUES)
@example(math.nan)
@example({"a": "null", "b": math.inf})  # text like a null before a real one
@example(["a:null", "\ud800"])
def test_a_value_proven_json_is_one_the_references_walk_accepts(value: Any) -> None:
    if proven_json(value):
        check_json_value(value)


@pytest.mark.slow  # many examples: out of the developer's loop
@pytest.mark.spec("JSON-1", "DELTA-1", "SYS-3", "TOOLS-3")
@settings(max_examples=scaled_examples(500))
@given(
    st.dictionaries(
        st.sampled_from(["system", "tools", "config", "messagePrefix", "x"]),
        JSON_TEXT_VALUES
        | st.fixed_dictionaries(
            {"keepStart": st.just(0), "keepEnd": st.just(0), "insert": JSON_TEXT_VALUES}
        ),
        max_size=2,
    ),
    REVISIONS,
)
def test_a_delta_folds_the_same_with_its_values_walk_skipped_when_proven(
    delta: dict[str, Any], revision: Revision
) -> None:
    # HeaderFold.delta skips the reference's walk of a delta's values when
    # proven_json holds: the outcome must be the reference's own
    base = {"config": {"model": "m"}, "system": "a\nb"}
    checked = proven_json(delta)
    try:
        expected = apply_to_canonical(base, delta, revision)
    except CodecError as error:
        with pytest.raises(type(error)):
            apply_to_canonical(base, delta, revision, values_checked=checked)
        return
    assert apply_to_canonical(base, delta, revision, values_checked=checked) == expected


STRINGS = st.text(max_size=3) | st.sampled_from(["a\ud800", "\udc00b", "null"])


def near_headers() -> st.SearchStrategy[dict[str, Any]]:
    """Headers of the right shape with values at JSON-1's edges, so the fast
    fold's answer is not None often enough to compare with the reference's."""
    json_values = st.recursive(
        LEAVES,
        lambda inner: (
            st.lists(inner, max_size=2) | st.dictionaries(STRINGS, inner, max_size=2)
        ),
        max_leaves=4,
    )
    config = st.fixed_dictionaries(
        {"model": STRINGS},
        optional={
            "temperature": st.floats() | st.integers(),
            "maxTokens": st.integers() | st.floats(),
            "stop": st.lists(STRINGS, max_size=2),
        },
    )
    tool = st.fixed_dictionaries(
        {"name": STRINGS}, optional={"parameters": json_values}
    )
    message = st.fixed_dictionaries(
        {"role": STRINGS, "content": st.lists(json_values, max_size=2)}
    )
    return st.fixed_dictionaries(
        {"config": config},
        optional={
            "system": STRINGS,
            "tools": st.lists(tool, max_size=3),
            "messagePrefix": st.lists(message, max_size=2),
            "messageSuffix": st.lists(message, max_size=2),
        },
    )


@pytest.mark.slow  # many examples: out of the developer's loop
@pytest.mark.spec("HDR-1", "CONFIG-2", "SYS-1", "TOOLS-2", "MSGS-1", "JSON-1")
@settings(max_examples=scaled_examples(500))
@given(near_headers(), REVISIONS)
def test_fast_canonical_agrees_with_the_reference_at_json_values_edges(
    header: dict[str, Any], revision: Revision
) -> None:
    fast = fast_canonical(header, revision)
    try:
        reference = canonical_header(header, revision)
    except CodecError:
        assert fast is None
        return
    assert fast is None or fast == reference


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    "header",
    [
        {"config": {"model": "m"}, "system": "a\ud800"},
        {"config": {"model": "m", "temperature": float("inf")}},
        {"config": {"model": "m", "temperature": float("nan")}},
        {"config": {"model": "m"}, "tools": [{"name": "t", "max": float("-inf")}]},
        {"config": {"model": "m"}, "tools": [{"name": "t", "\udc00": 1}]},
    ],
)
def test_fast_canonical_leaves_what_is_not_a_json_value_to_the_reference(
    header: dict[str, Any],
) -> None:
    with pytest.raises(CodecError):
        canonical_header(header, Revision.SESSION_PREFIX)
    assert fast_canonical(header, Revision.SESSION_PREFIX) is None


def test_the_fast_folds_shapes_are_the_revisions_header_fields() -> None:
    for revision in Revision:
        shape = _SHAPES[revision]
        assert [field.encode_name for field in msgspec.structs.fields(shape)] == list(
            revision.header_fields
        ), revision
        config = {field.name for field in msgspec.structs.fields(_Config)}
        assert config == {"model", "temperature", "maxTokens", "stop"}
