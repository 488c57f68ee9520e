"""The checker's fast paths judge a log as its slow paths do.

Four parts of the check keep a fast path besides a slow one that no other
property test covers:

- *reading a line*: the general path (msgspec decodes the line, `proven`
  re-encodes it and compares) against the strict path
  (`lines.explain_line`), which every line may take;
- *the revision of an undeclared log*: inferred riding the single pass
  (switching in place, or `RevisionRuledOut` and a second pass under the
  revision inferred: ``reqfold check``'s own `cli.check_one`, with
  ``--requests`` for some logs) against the two-pass way it replaced,
  `infer_revision` over the whole log and then a check;
- *passing chunks over with* ``--requests``: the reader passes over a
  step's chunks and the driver resolves its request after the first
  (`LogChecker._passed_over`), against reading every chunk, while each
  step is compared with its captured request;
- *the bounded read* of ``reqfold check`` (`cli._Prefix` under an
  `io.BufferedReader`, lines split in C, a long line in pieces the checker
  joins) against the file's lines handed to `check_lines` whole.

(The others have theirs: tests/conformance/test_check_header_fast.py for
the header fold, test_check_reader.py for the chunks the reader passes
over and a step's deferred first response, test_check_turn_rules.py and
test_check_surface.py for the turn and surface rules' shortcuts,
test_check_requests.py for the request rules' first response.)
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from example_counts import scaled_examples
from hypothesis import HealthCheck, given, settings, strategies as st
from undeclared_logs import USER, one_step_turns

from reqfold.conformance.check import FileReport, Finding, check_lines, cli, log_rules
from reqfold.conformance.check.lines import Envelope, Line, explain_line
from reqfold.conformance.check.log_rules import LogChecker
from reqfold.conformance.check.reconstruction import read_captures
from reqfold.conformance.check.revision_inference import (
    RevisionRuledOut,
    infer_revision,
)

FIXTURES = Path(__file__).parent / "check_fixtures"
TOUR = (FIXTURES / "valid" / "session-prefix.jsonl").read_bytes()
LINES = TOUR.splitlines(keepends=True)


class StrictOnly(LogChecker):
    """A checker whose every line takes the strict path (no general path)."""

    def _line(self, raw: Line, number: int, event: Envelope | None) -> None:
        super()._line(raw, number, None)


def seen(found: list[Finding]) -> list[tuple[object, ...]]:
    return [(f.rule, f.line, f.seq, f.level, f.message) for f in found]


def checked(kind: type[LogChecker], lines: list[bytes], thorough: bool) -> Any:
    checker = kind(thorough=thorough)
    return seen(list(checker.check(lines))), checker.summary


RESPELLINGS = (
    (b'","', b'", "'),  # spacing
    (b'{"type":', b'{"type" :'),
    (b'"seq":', b'"seq":0,"seq":'),  # a duplicate key
    (b'"time":1,', b""),  # a missing member
    (b'"data":{', b'"data":{"x":1,'),
    (b'"text":"', b'"text":"\\u0041'),  # an escape msgspec would not write
    (b"1", b"1.0"),
    (b"}\n", b',"extra":true}\n'),
    (b'"append"', b'"replace"'),
    (b"\n", b""),  # lines run together
)


@st.composite
def respelt_logs(draw: st.DrawFn) -> list[bytes]:
    """The valid tour with a few lines spelt otherwise (canonical or not)."""
    lines = list(LINES)
    for _ in range(draw(st.integers(0, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        old, new = draw(st.sampled_from(RESPELLINGS))
        lines[index] = lines[index].replace(old, new, 1)
    return [line for line in lines if line]


@pytest.mark.spec("JSON-1", "LOG-1", "LOG-2", "LOG-3", "LOG-4", "CHECK-2")
@settings(
    max_examples=scaled_examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(respelt_logs(), st.booleans())
def test_the_general_path_finds_what_the_strict_path_finds_on_every_line(
    lines: list[bytes], thorough: bool
) -> None:
    """With ``--thorough`` alike; without it the general path leaves the
    bodies no rule reads unread (docs/checker.md), so the strict path may
    find more of JSON-1 in them, and nothing else."""
    general, general_summary = checked(LogChecker, lines, thorough)
    strict, strict_summary = checked(StrictOnly, lines, thorough)
    assert general_summary == strict_summary
    if thorough:
        assert general == strict
    else:
        assert [f for f in general if f[0] != "JSON-1"] == [
            f for f in strict if f[0] != "JSON-1"
        ]
        assert set(general) <= set(strict)


def test_the_strict_only_model_reads_every_line_on_the_strict_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The model differs from the checker where it should: the checker
    reads the valid tour on its general path alone, the model every event
    line on the strict path, so the property above compares two paths."""
    explained: list[int] = []

    def counting(raw: bytes, number: int) -> Any:
        explained.append(number)
        return explain_line(raw, number)

    monkeypatch.setattr(log_rules, "explain_line", counting)
    assert checked(LogChecker, LINES, True)[0] == []
    assert explained == []
    assert checked(StrictOnly, LINES, True)[0] == []
    assert explained == list(range(2, len(LINES) + 1))


MESSAGE_FIELDS = ("messagePrefix", "messageSuffix", "messages")


@st.composite
def undeclared_logs(draw: st.DrawFn) -> list[bytes]:
    """Logs of one-step turns that declare no revision, whose header
    events carry message fields of either revision, early or late."""
    header_events: list[tuple[str, dict[str, object]]] = []
    for turn in range(1, draw(st.integers(1, 4)) + 1):
        fields = draw(st.lists(st.sampled_from(MESSAGE_FIELDS), unique=True))
        data: dict[str, object] = {name: [USER] for name in fields}
        if turn == 1 or draw(st.booleans()):
            header = {"config": {"model": draw(st.sampled_from("mn"))}, **data}
            header_events.append(("request/header", {"header": header}))
        else:
            if draw(st.booleans()):
                data["config"] = {"model": "o"}
            header_events.append(("request/header-delta", data))
    return one_step_turns(header_events)


ARGUMENTS = argparse.ArgumentParser()
cli.add_arguments(ARGUMENTS)

CAPTURED = (
    {"model": "m", "messages": [{"role": "user", "content": "go"}]},
    {"model": "m", "messages": [USER, {"role": "user", "content": "go"}]},
    {"model": "n", "messages": [{"role": "user", "content": "rules"}]},
)
"""Bare request bodies a drawn capture is made of (matching a step or not)."""


@st.composite
def captures(draw: st.DrawFn) -> list[bytes] | None:
    """A capture for ``--requests`` (some requests, matching or not), or None."""
    if not draw(st.booleans()):
        return None
    bodies = draw(st.lists(st.sampled_from(CAPTURED), max_size=4))
    return [json.dumps(body).encode() + b"\n" for body in bodies]


def in_one_pass(lines: list[bytes], captured: list[bytes] | None) -> FileReport:
    """What ``reqfold check`` does (`cli.check_one`, which infers in the
    pass and reads again if told to), on the lines as a file."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "log.jsonl"
        log.write_bytes(b"".join(lines))
        arguments = [str(log)]
        if captured is not None:
            requests = Path(folder) / "requests.jsonl"
            requests.write_bytes(b"".join(captured))
            arguments += ["--requests", str(requests)]
        return cli.check_one(str(log), ARGUMENTS.parse_args(arguments))


@pytest.mark.spec("HDR-2", "PREFIX-2")
@settings(max_examples=scaled_examples(200), deadline=None)
@given(undeclared_logs(), captures())
def test_inferring_in_the_pass_judges_as_inferring_first_does(
    lines: list[bytes], captured: list[bytes] | None
) -> None:
    """Also with ``--requests``, where a switch in place must move the
    reconstruction to the revision inferred."""
    inference = infer_revision(lines)
    oracle = check_lines(
        lines,
        revision=inference.revision if inference is not None else None,
        captures=read_captures(captured) if captured is not None else None,
    )
    single = in_one_pass(lines, captured)
    assert seen(single.findings) == seen(oracle.findings)
    assert single.summary.revision is oracle.summary.revision


@pytest.mark.spec("DELTA-1", "PREFIX-2")
def test_a_finding_that_names_the_revision_is_not_left_behind_by_a_switch() -> None:
    """A delta arm no revision has (``messages``) is judged under the
    revision read so far; evidence after it must not switch in place, or
    that finding names the wrong revision (the property above found it)."""
    lines = one_step_turns(
        [
            ("request/header", {"header": {"config": {"model": "m"}}}),
            ("request/header-delta", {"messages": [USER]}),
            ("request/header-delta", {"messagePrefix": [USER]}),
        ]
    )
    with pytest.raises(RevisionRuledOut):
        check_lines(iter(lines), infer=True)
    assert [f.message for f in in_one_pass(lines, None).findings] == [
        "unknown delta arm 'messages' in revision request-messages"
    ]


@pytest.mark.spec("JSONL-2", "JSONL-3", "JSONL-4", "LOG-2")
@settings(max_examples=scaled_examples(100), deadline=None)
@given(respelt_logs(), st.sampled_from([7, 64, 1 << 20]), st.booleans())
def test_the_bounded_read_finds_what_the_whole_lines_find(
    lines: list[bytes], buffer: int, torn: bool
) -> None:
    """Through ``reqfold check``'s reader, with read buffers small enough
    that most lines come in pieces, and a last line torn or not."""
    if torn:
        lines = [*lines[:-1], lines[-1][: len(lines[-1]) // 2]]
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as mp:
        log = Path(folder) / "log.jsonl"
        log.write_bytes(b"".join(lines))
        mp.setattr(cli, "READ_BUFFER", buffer)
        bounded = cli.check_one(str(log), ARGUMENTS.parse_args([str(log)]))
    whole = check_lines(b"".join(lines).splitlines(keepends=True), infer=True)
    assert seen(bounded.findings) == seen(whole.findings)
    assert bounded.summary == whole.summary


REQUESTS = FIXTURES / "requests"


@pytest.mark.spec("REQ-1", "REQ-2", "CHECK-1", "CACHE-2")
@settings(max_examples=scaled_examples(100), deadline=None)
@given(
    respelt_logs(),
    st.sampled_from(sorted(path.name for path in REQUESTS.glob("*.jsonl"))),
)
def test_passing_chunks_over_with_captures_finds_what_reading_every_line_does(
    lines: list[bytes], capture: str
) -> None:
    """`thorough` reads every line (the reader passes over none, and no
    first response is deferred); the findings of the rules that compare
    requests must not move."""
    captured = (REQUESTS / capture).read_bytes().splitlines(keepends=True)
    fast = check_lines(lines, captures=read_captures(captured))
    every = check_lines(lines, captures=read_captures(captured), thorough=True)
    assert [f for f in seen(fast.findings) if f[0] != "JSON-1"] == [
        f for f in seen(every.findings) if f[0] != "JSON-1"
    ]
    assert fast.summary.requests_matched == every.summary.requests_matched
    assert fast.summary.steps_dispatched == every.summary.steps_dispatched
