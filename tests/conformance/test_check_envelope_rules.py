"""The checker's shortcuts agree with its rules in full: the envelope rules' common
case, and a step's first chunk passed over by the reader."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from example_counts import scaled_examples
from hypothesis import given, settings, strategies as st
from msgspec import UNSET

from reqfold.conformance.check import check_lines
from reqfold.conformance.check.envelope_rules import (
    KNOWN_TYPES,
    EnvelopeRules,
    data_object,
)
from reqfold.conformance.check.lines import Envelope
from reqfold.reference.session_log import sources_problem

TYPES = st.sampled_from([*sorted(KNOWN_TYPES), "", "x/unknown"])
RAW_DATA = st.sampled_from([b"{}", b'{"a":1}', b"[]", b'"text"', b"1", b"null"])
DATA = (
    RAW_DATA.map(msgspec.Raw)
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
    | st.just([1])
)
SOURCES = st.one_of(
    st.just(UNSET),
    st.lists(st.integers(-2, 12), max_size=4),
    st.builds(
        lambda start, size: list(range(start, start + size)),
        st.integers(-1, 10),
        st.integers(0, 4),
    ),
)
SURFACE_OPS = st.sampled_from([UNSET, msgspec.Raw(b'"append"'), "append"])


@st.composite
def events(draw: st.DrawFn) -> tuple[Envelope, int]:
    """An event as msgspec decodes it (or the strict path builds it), and the
    seq the rules expect next (often its own)."""
    seq = draw(st.integers(0, 12))
    expected = draw(st.sampled_from([seq, seq, seq, seq - 1, seq + 1, 0]))
    event = Envelope(
        type=draw(TYPES),
        seq=seq,
        time=draw(st.sampled_from([0, 5, -1])),
        data=draw(DATA),
        sourceEventSeqs=draw(SOURCES),
        surfaceOp=draw(SURFACE_OPS),
    )
    return event, expected


def state(rules: EnvelopeRules) -> tuple[Any, ...]:
    return (rules.next_seq, rules.slack, rules.events, dict(rules.unknown.counts))


def by_shortcut(
    rules: EnvelopeRules, event: Envelope, prechecked: bool
) -> tuple[int, Any, list[Any]]:
    """What the checker makes of an event's envelope: the shortcut for what
    msgspec decoded (`common`), else the rules in full."""
    if not prechecked and rules.common(event):
        return event.seq, event.data, []
    return rules.check(event, 7, prechecked, True)


@pytest.mark.slow  # many examples: out of the developer's loop
@pytest.mark.spec("LOG-1", "LOG-2", "LOG-3", "LOG-4", "LOG-5", "LOG-7")
@settings(max_examples=scaled_examples(1000))
@given(events(), st.booleans(), st.integers(0, 2))
def test_the_envelope_shortcut_returns_and_leaves_what_the_full_rules_do(
    case: tuple[Envelope, int], prechecked: bool, slack: int
) -> None:
    event, expected = case
    if not prechecked:  # msgspec decoded it: `Envelope` refuses a negative time
        event.time = abs(event.time)
    shortcut, full = EnvelopeRules(), EnvelopeRules()
    for rules in (shortcut, full):
        rules.next_seq, rules.slack = expected, slack
    got = by_shortcut(shortcut, event, prechecked)
    want = full.check(event, 7, prechecked, True)
    assert got[0] == want[0]
    assert got[1] is want[1]
    assert got[2] == want[2]
    assert state(shortcut) == state(full)


@pytest.mark.spec("LOG-5")
@settings(max_examples=scaled_examples(500))
@given(
    st.sampled_from(["user/message", "assistant/message", "tool/result"]),
    st.integers(0, 6),
    st.lists(st.integers(-2, 7), max_size=5),
)
def test_the_envelope_shortcut_lets_through_only_sources_the_full_rules_accept(
    kind: str, seq: int, sources: list[int]
) -> None:
    """On the shortcut's own ground (a surface event with the next seq and an
    object for data), whatever the sources: negative, repeated, out of order,
    this event's seq or later."""
    event = Envelope(kind, seq, 0, msgspec.Raw(b"{}"), sources, "append")
    shortcut, full = EnvelopeRules(), EnvelopeRules()
    shortcut.next_seq = full.next_seq = seq
    got = by_shortcut(shortcut, event, False)
    want = full.check(event, 7, False, True)
    assert got[2] == want[2]
    assert state(shortcut) == state(full)
    # and both as the reference judges (the full rules have a shortcut too)
    broken = sources_problem(sources, seq) is not None
    assert [f.rule for f in want[2]] == (["LOG-5"] if broken else [])


def _line(kind: str, seq: int, data: str) -> bytes:
    return f'{{"type":"{kind}","seq":{seq},"time":1,"data":{data}}}\n'.encode()


@pytest.mark.spec("REQ-2")
@pytest.mark.parametrize("chunks", [1, 2, 5])
def test_a_first_chunk_passed_over_resolves_its_step_at_its_own_line(
    chunks: int,
) -> None:
    # the reader passes over a step's first chunk and the driver tells the
    # request rules after it, also when the log ends there: the findings are
    # those of reading every line (--thorough passes over nothing)
    lines = [
        b'{"type":"session","version":0,"id":"s","createdAt":1}\n',
        _line("turn/start", 0, '{"turn":1}'),
        _line("step/start", 1, '{"turn":1,"step":1}'),
        *(
            _line("assistant/chunk", 2 + n, '{"turn":1,"step":1}')
            for n in range(chunks)
        ),
    ]
    fast, slow = check_lines(lines), check_lines(lines, thorough=True)
    assert [(f.rule, f.line, f.seq) for f in fast.findings] == [
        ("REQ-2", 4, 2),
        ("TURN-1", len(lines), None),
    ]
    assert fast.findings == slow.findings
    assert fast.summary.events == slow.summary.events == 2 + chunks


def _turn(*middle: bytes) -> list[bytes]:
    """A one-step turn with its header, `middle` between the header and the
    assistant's message (which names no sources: LOG-4 is not the point)."""
    return [
        b'{"type":"session","version":0,"id":"s","createdAt":1}\n',
        _line("turn/start", 0, '{"turn":1}'),
        _line("step/start", 1, '{"turn":1,"step":1}'),
        _line(
            "request/header",
            2,
            '{"header":{"config":{"model":"m"}},"reason":"initial"}',
        ),
        *middle,
    ]


CHUNK = '{"turn":1,"step":1}'
LONG = '{"turn":1,"step":1,"n":' + "9" * 400 + "}"


@pytest.mark.spec("JSON-1", "LOG-2", "JSONL-4")
@pytest.mark.parametrize(
    ("lines", "wanted"),
    [
        pytest.param(
            _turn(_line("assistant/chunk", 3, LONG)),
            ("JSON-1", 5, 3),
            id="first-chunk-holds-an-integer-no-double-holds",
        ),
        pytest.param(
            _turn(
                _line("assistant/chunk", 3, CHUNK),
                _line("assistant/chunk", 4, LONG),
            ),
            ("JSON-1", 6, 4),
            id="later-chunk-holds-an-integer-no-double-holds",
        ),
        pytest.param(
            _turn(
                b"{damaged\n",
                _line("assistant/chunk", 3, CHUNK),
                _line("assistant/chunk", 5, CHUNK),
            ),
            ("LOG-2", 7, 5),
            id="gap-after-chunks-that-follow-a-damaged-line",
        ),
        pytest.param(
            _turn(
                _line("assistant/chunk", 3, CHUNK),
                b"{damaged\n",
                _line("assistant/chunk", 4, CHUNK),
                _line("assistant/chunk", 6, CHUNK),
            ),
            ("LOG-2", 8, 6),
            id="gap-after-a-responded-steps-chunks-past-a-damaged-line",
        ),
    ],
)
def test_chunks_passed_over_hide_no_finding_reading_every_line_shows(
    lines: list[bytes], wanted: tuple[str, int, int]
) -> None:
    # a chunk the reader passes over still counts as the event that ends the
    # slack a damaged line gave, and a chunk holding an integer no double
    # holds is not passed over (found by review: both were lost)
    fast, slow = check_lines(lines), check_lines(lines, thorough=True)
    found = [(f.rule, f.line, f.seq) for f in fast.findings]
    assert wanted in found
    assert found == [(f.rule, f.line, f.seq) for f in slow.findings]


@pytest.mark.spec("LOG-3")
@pytest.mark.parametrize(
    ("data", "is_object"),
    [
        (msgspec.Raw(b'{"a":[1]}'), True),
        (msgspec.Raw(b"{}"), True),
        (msgspec.Raw(b"[{}]"), False),
        (msgspec.Raw(b'"{"'), False),
        (msgspec.Raw(b"1"), False),
        (msgspec.Raw(b""), False),
        ({"a": 1}, True),
        ([{}], False),
        ("{", False),
    ],
)
def test_data_is_an_object_when_it_is_one_raw_or_decoded(
    data: Any, is_object: bool
) -> None:
    assert (data_object(data) is data) is is_object
    assert (data_object(data) is None) is not is_object
