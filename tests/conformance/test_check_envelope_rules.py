"""The envelope rules' shortcut for the common case agrees with the rules in full."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings, strategies as st
from msgspec import UNSET

from conformance.check.envelope_rules import KNOWN_TYPES, EnvelopeRules
from conformance.check.lines import Envelope

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


@pytest.mark.spec("LOG-1", "LOG-2", "LOG-3", "LOG-4", "LOG-5", "LOG-7")
@settings(max_examples=1000)
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
    got = shortcut.check(event, 7, prechecked, True)
    want = full.check_fully(event, 7, prechecked, True)
    assert got[0] == want[0]
    assert got[1] is want[1]
    assert got[2] == want[2]
    assert state(shortcut) == state(full)
