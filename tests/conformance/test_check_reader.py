"""The reader passes over only chunk lines on which the rules would find
nothing: on chunk lines varied at the envelope (member order, spacing,
duplicate or extra members, escaped names, bad values, bytes no UTF-8
holds), checking a log finds exactly what it finds when the reader passes
over no line and the rules read every chunk."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from example_counts import scaled_examples
from hypothesis import given, settings, strategies as st

from reqfold.conformance.check import FileReport, check_lines, log_rules
from reqfold.conformance.check.lines import EVENT_DECODER
from reqfold.conformance.check.reader import (
    DECODE_ERRORS,
    LineReader,
    ReadLine,
    rest_of_line,
)

DATA = '{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"ab"}}'


def _line(kind: str, seq: int, data: str) -> bytes:
    return f'{{"type":"{kind}","seq":{seq},"time":1,"data":{data}}}\n'.encode()


def _members(seq: int) -> list[tuple[str, str]]:
    return [
        ('"type"', '"assistant/chunk"'),
        ('"seq"', str(seq)),
        ('"time"', "5"),
        ('"data"', DATA),
    ]


VARIATIONS = [
    "none",
    "swap",
    "space",
    "duplicate-seq",
    "duplicate-type",
    "duplicate-other-type",
    "extra-member",
    "surface-op",
    "source-seqs",
    "escaped-name",
    "negative-time",
    "float-time",
    "string-seq",
    "other-seq",
    "array-data",
    "latin-1-text",
    "utf-8-text",
    "long-integer",
    "trailing-text",
    "no-newline",
]


def _chunk(seq: int, variation: str) -> bytes:
    """A chunk line of seq `seq`, as a writer would log it but for `variation`."""
    members = _members(seq)
    tail = "\n"
    if variation == "swap":
        members[1], members[2] = members[2], members[1]
    elif variation == "duplicate-seq":
        members.insert(3, ('"seq"', str(seq)))
    elif variation == "duplicate-type":
        members.append(('"type"', '"assistant/chunk"'))
    elif variation == "duplicate-other-type":
        members.insert(3, ('"type"', '"assistant/message"'))
    elif variation == "extra-member":
        members.append(('"x"', "{}"))
    elif variation == "surface-op":  # before data: the line ends as a chunk's
        members.insert(3, ('"surfaceOp"', '"append"'))
    elif variation == "source-seqs":
        members.insert(3, ('"sourceEventSeqs"', "[]"))
    elif variation == "escaped-name":
        members[1] = ('"s\\u0065q"', str(seq))
    elif variation == "negative-time":
        members[2] = ('"time"', "-5")
    elif variation == "float-time":
        members[2] = ('"time"', "5.0")
    elif variation == "string-seq":
        members[1] = ('"seq"', f'"{seq}"')
    elif variation == "other-seq":
        members[1] = ('"seq"', str(seq + 1))
    elif variation == "array-data":
        members[3] = ('"data"', "[" + DATA + "]")
    elif variation == "long-integer":
        members[3] = ('"data"', DATA[:-1] + ',"n":' + "9" * 400 + "}")
    elif variation == "trailing-text":
        tail = " x\n"
    elif variation == "no-newline":
        tail = ""
    joiner = ", " if variation == "space" else ","
    text = "{" + joiner.join(f"{name}:{value}" for name, value in members) + "}"
    line = (text + tail).encode()
    if variation == "latin-1-text":
        line = line.replace(b'"ab"', b'"a\xe9"')
    elif variation == "utf-8-text":
        line = line.replace(b'"ab"', '"a\u00e9\U0001f600"'.encode())
    return line


def _log(variations: list[str], responded: bool, in_turn: bool = True) -> list[bytes]:
    """A step's chunks varied by `variations`, inside turn 1 or (not
    `in_turn`) in a step opened outside any turn."""
    opening = [
        ("turn/start", '{"turn":1}'),
        ("step/start", '{"turn":1,"step":1}'),
        ("request/header", '{"header":{"config":{"model":"m"}},"reason":"initial"}'),
    ]
    if not in_turn:
        del opening[0]
    lines = [b'{"type":"session","version":0,"id":"s","createdAt":1}\n']
    lines += [_line(kind, seq, data) for seq, (kind, data) in enumerate(opening)]
    seq = len(opening)
    if responded:  # a first chunk the reader never passes over in this case
        lines.append(_chunk(seq, "none"))
        seq += 1
    for variation in variations:
        lines.append(_chunk(seq, variation))
        seq += 1
    return lines


class _EveryLine(LineReader):
    """A reader that passes over no line: the rules read every chunk."""

    expected = property(lambda self: None, lambda self, value: None)

    def __iter__(self) -> Iterator[ReadLine]:
        number = self.lines
        for piece in self._lines:
            raw = rest_of_line(piece, self._lines) if piece[-1:] != b"\n" else piece
            try:  # like `LineReader`, no envelope for a line without its newline
                event = EVENT_DECODER.decode(raw) if raw[-1:] == b"\n" else None
            except DECODE_ERRORS:
                event = None
            number += 1
            yield number, raw, event
        self.lines = number


def _reading_every_line(lines: list[bytes]) -> FileReport:
    """The check of `lines` by rules that read every line."""
    reader = log_rules.LineReader
    log_rules.LineReader = _EveryLine  # type: ignore[misc]
    try:
        return check_lines(lines)
    finally:
        log_rules.LineReader = reader  # type: ignore[misc]


def _seen(report: FileReport) -> list[tuple[object, ...]]:
    return [(f.rule, f.line, f.seq, f.message) for f in report.findings]


@pytest.mark.spec("JSON-1", "JSONL-1", "LOG-1", "LOG-2", "LOG-3", "LOG-5", "TURN-4")
@settings(max_examples=scaled_examples(400))
@given(
    st.lists(st.sampled_from(VARIATIONS), min_size=1, max_size=6),
    st.booleans(),
    st.booleans(),
)
def test_passing_chunks_over_finds_what_reading_every_chunk_finds(
    variations: list[str], responded: bool, in_turn: bool
) -> None:
    lines = _log(variations, responded, in_turn)
    fast, read = check_lines(lines), _reading_every_line(lines)
    assert _seen(fast) == _seen(read)
    assert fast.summary.events == read.summary.events
    assert fast.summary.lines == read.summary.lines
