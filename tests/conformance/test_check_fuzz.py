"""Random and mutated logs: no exception escapes, every finding names a line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from example_counts import scaled_examples
from hypothesis import HealthCheck, given, settings, strategies as st

from reqfold.conformance.check import check_lines
from reqfold.conformance.rules import load_rules

VALID = Path(__file__).parent / "check_fixtures" / "valid" / "session-prefix.jsonl"
LINES = VALID.read_bytes().splitlines(keepends=True)
RULES = load_rules()


def assert_well_formed(lines: list[bytes], *, thorough: bool = False) -> None:
    report = check_lines(lines, thorough=thorough)
    count = max(len(lines), 1)
    for finding in report.findings:
        assert finding.rule in RULES
        assert finding.rule != "CHECK-2", finding.message  # no checker crash
        assert 1 <= finding.line <= count
        assert finding.level in ("MUST", "SHOULD")
        assert finding.message


@st.composite
def mutated_logs(draw: st.DrawFn) -> list[bytes]:
    """The valid tour with a few byte-, line- or value-level edits."""
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 4))):
        edit = draw(
            st.sampled_from(["flip", "cut", "drop", "dup", "swap", "splice", "tail"])
        )
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        if edit == "flip" and line:
            at = draw(st.integers(0, len(line) - 1))
            byte = draw(st.integers(0, 255))
            lines[index] = line[:at] + bytes([byte]) + line[at + 1 :]
        elif edit == "cut":
            lines[index] = line[: draw(st.integers(0, len(line)))] + b"\n"
        elif edit == "drop" and len(lines) > 1:
            del lines[index]
        elif edit == "dup":
            lines.insert(index, line)
        elif edit == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif edit == "splice":
            token = draw(
                st.sampled_from(
                    [
                        b"NaN",
                        b"1e999",
                        b'"\\ud800"',
                        b"null",
                        b"[]",
                        b"{}",
                        b"true",
                        b'"append"',
                        b'{"op":"replace","start":1,"end":3}',
                        b"-1",
                    ]
                )
            )
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + token + line[at:]
        elif edit == "tail":
            lines[-1] = lines[-1].rstrip(b"\n")[: draw(st.integers(0, 40))]
    return lines


@pytest.mark.slow
@pytest.mark.spec("CHECK-2", "JSONL-3", "JSONL-4", "JSON-1")
@settings(
    max_examples=scaled_examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(mutated_logs(), st.booleans())
def test_mutated_logs_never_crash_the_checker(
    lines: list[bytes], thorough: bool
) -> None:
    assert_well_formed(lines, thorough=thorough)


@pytest.mark.spec("CHECK-2")
@settings(max_examples=scaled_examples(300), deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=12))
def test_random_bytes_never_crash_the_checker(chunks: list[bytes]) -> None:
    lines = b"\n".join(chunks).splitlines(keepends=True)
    assert_well_formed(lines)


JSON_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
)
FIELD_NAMES = st.lists(
    st.sampled_from(
        [
            "type",
            "seq",
            "time",
            "data",
            "surfaceOp",
            "turn",
            "step",
            "header",
            "reason",
            "config",
            "start",
            "end",
            "op",
        ]
    ),
    unique=True,
    max_size=5,
)


def objects(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects of up to five members named like envelope and header fields.

    What ``st.dictionaries(st.sampled_from(NAMES), values, max_size=5)``
    makes, drawn as the names, then a value for each: the same objects,
    without the filtered strategy hypothesis builds for every
    ``dictionaries`` draw to keep the names unique (a quarter of the calls
    of test_random_events_never_crash_the_checker).
    """

    @st.composite
    def draw_object(draw: st.DrawFn) -> dict[str, Any]:
        return {name: draw(values) for name in draw(FIELD_NAMES)}

    return draw_object()


JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | objects(inner),
    max_leaves=15,
)


EVENT_TYPES = st.sampled_from(
    [
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "user/message",
        "assistant/chunk",
        "assistant/message",
        "request/header",
        "request/header-delta",
        "tool/result",
        "x/unknown",
        "",
    ]
)
SEQ_SLIPS = st.sampled_from([0, 0, 1])
SURFACE_OPS = JSON_VALUES | st.just("append")
SOURCE_SEQS = st.lists(st.integers(-1, 12), max_size=3)
# The strategies above are built once: building one inside a draw costs
# hypothesis more than the draws themselves (validation, labels, emptiness).


@st.composite
def random_events(draw: st.DrawFn) -> list[bytes]:
    """Envelope-shaped lines whose types and data are arbitrary."""
    lines = [b'{"type":"session","version":0,"id":"f","createdAt":0}\n']
    for seq in range(draw(st.integers(0, 12))):
        event = {
            "type": draw(EVENT_TYPES),
            "seq": seq + draw(SEQ_SLIPS),
            "time": 0,
            "data": draw(JSON_VALUES),
        }
        if draw(st.booleans()):
            event["surfaceOp"] = draw(SURFACE_OPS)
        if draw(st.booleans()):
            event["sourceEventSeqs"] = draw(SOURCE_SEQS)
        lines.append(json.dumps(event, allow_nan=True).encode() + b"\n")
    return lines


@pytest.mark.slow  # many examples: out of the developer's loop
@pytest.mark.spec("CHECK-2", "LOG-1", "LOG-3", "LOG-4", "LOG-7")
@settings(max_examples=scaled_examples(300), deadline=None)
@given(random_events())
def test_random_events_never_crash_the_checker(lines: list[bytes]) -> None:
    assert_well_formed(lines)
