"""Laws of the header codec, checked with hypothesis over generated headers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, strategies as st

from reqfold.conformance.rules import load_rules
from reqfold.conformance.strategies import header_sequences, headers
from reqfold.reference.errors import CodecError
from reqfold.reference.header import (
    apply_header_delta,
    canonical_header,
    delta_round_trips,
    diff_header,
    fold_request_header,
    header_equals,
)
from reqfold.reference.revisions import Revision
from reqfold.reference.writer import record_header

revisions = st.sampled_from(list(Revision))
SPEC_RULES = frozenset(load_rules())


def with_revision(
    *parts: Callable[[Revision], st.SearchStrategy[Any]],
) -> st.SearchStrategy[tuple[Any, ...]]:
    """A revision and values of `parts` for it; each revision's tuple strategy
    is built once, not per example."""
    by_revision = {
        revision: st.tuples(st.just(revision), *(part(revision) for part in parts))
        for revision in Revision
    }
    return revisions.flatmap(by_revision.__getitem__)


def writer_log(sequence: list[dict], revision: Revision) -> list[dict]:
    """Run the writer over a sequence of request headers of one instance."""
    events: list[dict] = []
    baseline = None
    for index, header in enumerate(sequence):
        event = record_header(baseline, index > 0, header, revision)
        if event is not None:
            events.append({**event, "seq": len(events)})
            baseline = fold_request_header(events[-1:], baseline, revision)
    return events


@pytest.mark.spec("HDR-4", "HDR-5")
@given(with_revision(headers))
def test_canonical_form_is_idempotent(pair: tuple[Revision, dict]) -> None:
    revision, header = pair
    once = canonical_header(header, revision)
    assert canonical_header(once, revision) == once
    assert list(canonical_header(once, revision)) == list(once)


@pytest.mark.spec("DELTA-2", "EQ-1")
@given(with_revision(headers))
def test_diff_of_equal_headers_is_none(pair: tuple[Revision, dict]) -> None:
    revision, header = pair
    assert diff_header(header, canonical_header(header, revision), revision) is None


@pytest.mark.spec("DELTA-2", "EQ-1")
@given(with_revision(headers, headers))
def test_diff_is_none_exactly_when_headers_are_equal(
    triple: tuple[Revision, dict, dict],
) -> None:
    revision, a, b = triple
    assert (diff_header(a, b, revision) is None) == header_equals(a, b, revision)


@pytest.mark.spec("WRITER-3", "DELTA-6")
@given(with_revision(headers, headers))
def test_a_delta_the_writer_logs_always_round_trips(
    triple: tuple[Revision, dict, dict],
) -> None:
    revision, prev, next_ = triple
    event = record_header(canonical_header(prev, revision), True, next_, revision)
    if event is not None and event["type"] == "request/header-delta":
        assert header_equals(
            apply_header_delta(prev, event["data"], revision), next_, revision
        )


@pytest.mark.spec("WRITER-4", "DELTA-6")
@given(with_revision(headers, headers))
def test_a_fallback_happens_exactly_when_the_diff_does_not_round_trip(
    triple: tuple[Revision, dict, dict],
) -> None:
    revision, prev, next_ = triple
    event = record_header(canonical_header(prev, revision), True, next_, revision)
    delta = diff_header(prev, next_, revision)
    is_fallback = event is not None and event["data"].get("reason") == "fallback"
    assert is_fallback == (
        delta is not None and not delta_round_trips(prev, delta, next_, revision)
    )


@pytest.mark.spec("WRITER-1", "WRITER-5", "FOLD-1")
@given(with_revision(header_sequences))
def test_the_writers_log_folds_back_to_every_header_it_was_given(
    pair: tuple[Revision, list[dict]],
) -> None:
    revision, sequence = pair
    events: list[dict] = []
    baseline = None
    for index, header in enumerate(sequence):
        event = record_header(baseline, index > 0, header, revision)
        if index == 0:
            assert event is not None
            assert event["data"]["reason"] == "initial"
        if event is not None:
            events.append({**event, "seq": len(events)})
        baseline = fold_request_header(events, None, revision)
        assert header_equals(baseline, header, revision)


@pytest.mark.spec("FOLD-3")
@given(
    with_revision(lambda revision: header_sequences(revision, min_size=2)),
    st.integers(min_value=0, max_value=10),
)
def test_folding_in_two_parts_equals_folding_at_once(
    pair: tuple[Revision, list[dict]], cut: int
) -> None:
    revision, sequence = pair
    events = writer_log(sequence, revision)
    cut = min(cut, len(events))
    first = fold_request_header(events[:cut], None, revision)
    whole = fold_request_header(events, None, revision)
    assert fold_request_header(events[cut:], first, revision) == whole


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(
                st.sampled_from(["config", "system", "tools", "model", "x"]),
                children,
                max_size=3,
            )
        ),
        max_leaves=12,
    ),
    st.sampled_from(["canonical", "diff", "apply", "fold"]),
)
def test_arbitrary_json_raises_only_codec_errors_with_a_rule(
    value: object, operation: str
) -> None:
    try:
        if operation == "canonical":
            canonical_header(value)  # type: ignore[arg-type]
        elif operation == "diff":
            diff_header(value, {"config": {"model": "m"}})  # type: ignore[arg-type]
        elif operation == "apply":
            apply_header_delta({"config": {"model": "m"}, "system": "a"}, value)  # type: ignore[arg-type]
        else:
            fold_request_header([{"type": "request/header", "seq": 0, "data": value}])  # type: ignore[list-item]
    except CodecError as error:
        refused: CodecError | None = error
    else:
        refused = None
    if refused is not None:
        assert refused.rule in SPEC_RULES, refused
        assert refused.seq == (0 if operation == "fold" else None), refused
