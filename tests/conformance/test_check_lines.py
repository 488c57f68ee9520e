"""Bad input: each gets a clear finding with its line number, and the check goes on."""

from __future__ import annotations

import json
import re

import pytest
from example_counts import scaled_examples
from hypothesis import given, settings, strategies as st

from reqfold.conformance.check import Finding, check_lines
from reqfold.conformance.check.lines import WINDOW, has_long_integer
from reqfold.conformance.check.recording_json import (
    JsonDamaged,
    _parse_iteratively,
    parse_json,
)

STORAGE = b'{"type":"session","version":0,"id":"s","createdAt":0}\n'


def event(seq: int, kind: str, data: str) -> bytes:
    return f'{{"type":"{kind}","seq":{seq},"time":0,"data":{data}}}\n'.encode()


def turn_of(*inner: bytes) -> list[bytes]:
    """A storage line, turn/start, `inner` (seqs 1..), turn/end."""
    return [
        STORAGE,
        event(0, "turn/start", '{"turn":1}'),
        *inner,
        event(len(inner) + 1, "turn/end", '{"turn":1,"reason":{}}'),
    ]


def rules_at(lines: list[bytes], **options: object) -> set[tuple[str, int]]:
    report = check_lines(lines, **options)  # type: ignore[arg-type]
    return {(f.rule, f.line) for f in report.findings}


@pytest.mark.spec("JSON-1", "LOG-7")
def test_deep_nesting_in_a_chunk_is_read_without_a_finding() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    lines = turn_of(event(1, "plugin/deep", f'{{"x":{deep}}}'))
    assert rules_at(lines) == set()
    assert rules_at(lines, thorough=True) == set()


@pytest.mark.spec("JSON-1")
def test_a_duplicate_key_deep_inside_a_value_is_found_iteratively() -> None:
    deep = '{"a":' * 5000 + '{"k":1,"k":2}' + "}" * 5000
    lines = turn_of(event(1, "tool/call", f'{{"args":{deep}}}'))
    assert rules_at(lines) == {("JSON-1", 3)}


@pytest.mark.spec("JSONL-2", "LOG-7")
def test_a_multi_megabyte_line_is_checked_like_any_other() -> None:
    text = "x" * (8 << 20)
    big = event(1, "tool/call", json.dumps({"output": text}))
    report = check_lines(turn_of(big, event(2, "plugin/x", "{}")))
    assert report.findings == []
    assert report.summary.unknown_types == {"plugin/x": 1}


@pytest.mark.spec("JSONL-3", "JSONL-4")
def test_a_torn_tail_is_told_apart_from_damage_in_the_middle() -> None:
    lines = turn_of(event(1, "tool/call", "{}"))
    torn = [*lines, b'{"type":"turn/st']
    damaged = [lines[0], lines[1], b'{"type":"tool/c\n', lines[3]]
    torn_report = check_lines(torn)
    assert {(f.rule, f.level) for f in torn_report.findings} == {("JSONL-3", "SHOULD")}
    assert rules_at(damaged) == {("JSONL-4", 3)}


@pytest.mark.spec("LOG-2", "JSONL-4")
def test_a_damaged_line_does_not_cascade_into_seq_findings() -> None:
    lines = turn_of(event(1, "tool/call", "{}"), event(2, "tool/call", "{}"))
    lines[2] = b"garbage\n"
    assert rules_at(lines) == {("JSONL-4", 3)}


@pytest.mark.spec("JSONL-1", "JSONL-4", "JSON-1")
@pytest.mark.parametrize(
    ("line", "rule"),
    [
        (b"\xef\xbb\xbf" + event(1, "tool/call", "{}"), "JSONL-4"),
        (event(1, "tool/call", '{"x":"\\ud800"}'), "JSON-1"),
        (event(1, "tool/call", '{"x":"caf@"}').replace(b"@", b"\xc3"), "JSONL-4"),
        (event(1, "tool/call", '{"x":Infinity}'), "JSON-1"),
        (event(1, "tool/call", '{"x":1,"x":1}'), "JSON-1"),
        (event(1, "tool/call", '{"x":-1e400}'), "JSON-1"),
    ],
)
def test_bad_json_is_reported_at_its_line_and_the_check_goes_on(
    line: bytes, rule: str
) -> None:
    lines = turn_of(line, event(2, "step/end", "{}"))
    found = rules_at(lines, thorough=True)
    assert (rule, 3) in found
    assert ("TURN-2", 4) in found  # the check went on to the next line


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    ("read", "unread"),
    [
        ('{"turn":1,"step":1,"step":1}', '{"x":1,"x":1}'),
        ('{"turn":1,"step":1,"x":1e400}', '{"x":-1E400}'),
    ],
    ids=["a duplicate key", "an exponent beyond a double"],
)
def test_data_the_rules_read_is_checked_by_default_the_rest_with_thorough(
    read: str, unread: str
) -> None:
    # docs/checker.md, "Bodies the rules do not read": the limit, kept true
    assert ("JSON-1", 3) in rules_at(turn_of(event(1, "step/start", read)))
    for kind in ("tool/call", "assistant/chunk"):
        lines = turn_of(event(1, kind, unread))
        assert ("JSON-1", 3) not in rules_at(lines)
        assert ("JSON-1", 3) in rules_at(lines, thorough=True)


def test_invalid_utf8_bytes_are_reported() -> None:
    bad = b'{"type":"tool/call","seq":1,"time":0,"data":{"x":"caf\xc3"}}\n'
    assert rules_at(turn_of(bad)) == {("JSONL-4", 3)}


@pytest.mark.spec("JSONL-1")
@pytest.mark.parametrize(
    "first",
    [
        b"",
        b'{"type":"session","version":1,"id":"s","createdAt":0}\n',
        b'{"type":"session","version":0,"createdAt":0}\n',
        b"[]\n",
        b'{"type":"session","version":0,"id":"s","createdAt":0,"revision":"v9"}\n',
    ],
)
def test_a_bad_storage_line_is_reported_at_line_one(first: bytes) -> None:
    lines = [first] if first else []
    report = check_lines(lines)
    assert ("JSONL-1", 1) in {(f.rule, f.line) for f in report.findings}


@pytest.mark.spec("JSONL-1")
def test_the_storage_lines_revision_is_used_unless_overridden() -> None:
    from reqfold.reference.revisions import Revision

    first = (
        b'{"type":"session","version":0,"id":"s","createdAt":0,'
        b'"revision":"header-events"}\n'
    )
    report = check_lines([first])
    assert report.summary.revision is Revision.HEADER_EVENTS
    report = check_lines([first], revision=Revision.REQUEST_MESSAGES)
    assert report.summary.revision is Revision.REQUEST_MESSAGES


@pytest.mark.spec("LOG-2")
def test_a_log_breaking_a_rule_on_every_line_keeps_a_bounded_report() -> None:
    lines = [STORAGE] + [event(5, "tool/call", "{}") for _ in range(1000)]
    report = check_lines(lines)
    assert len(report.findings) == 2 * 200  # LOG-2 and TURN-4, capped
    assert report.suppressed["LOG-2"] > 0
    assert not report.ok


JSON_TEXTS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)
    ),
    max_leaves=20,
).map(json.dumps)


@pytest.mark.spec("JSON-1")
@settings(max_examples=scaled_examples(300), deadline=None)
@given(JSON_TEXTS)
def test_the_strict_parser_reads_json_like_the_standard_library(text: str) -> None:
    parsed = parse_json(text)
    assert parsed.value == json.loads(text)
    assert parsed.problems == []
    problems: list[str] = []
    assert _parse_iteratively(text, problems) == json.loads(text)
    assert problems == []


@given(st.text(alphabet='[]{}",:0123456789.eE-+ tfrunlasNIiy\\', max_size=30))
def test_both_strict_parsers_raise_only_json_damaged_and_agree(text: str) -> None:
    outcomes = []
    for parse in (lambda t: parse_json(t).value, lambda t: _parse_iteratively(t, [])):
        try:
            outcomes.append(("value", json.dumps(parse(text))))
        except JsonDamaged:
            outcomes.append(("damaged", ""))
    assert outcomes[0] == outcomes[1]


@pytest.mark.spec("JSON-5", "LOG-1", "JSONL-1", "TURN-1", "LOG-5", "SURF-1")
def test_integral_floats_are_integers_wherever_an_integer_is_required() -> None:
    lines = [
        b'{"type":"session","version":0.0,"id":"s","createdAt":0.0,"seedLength":0.0}\n',
        b'{"type":"turn/start","seq":0.0,"time":1.0,"data":{"turn":1.0}}\n',
        b'{"type":"user/message","seq":1,"time":0,"data":{"content":[]},'
        b'"surfaceOp":"append"}\n',
        b'{"type":"user/message","seq":2,"time":0,"data":{"content":[]},'
        b'"sourceEventSeqs":[1.0],"surfaceOp":{"op":"replace","start":1.0,"end":1.0}}\n',
        event(3, "turn/end", '{"turn":1,"reason":{}}'),
    ]
    assert rules_at(lines) == set()


@pytest.mark.spec("JSONL-1")
def test_a_negative_seed_length_is_refused() -> None:
    lines = [
        b'{"type":"session","version":0,"id":"s","createdAt":0,"seedLength":-1}\n',
        *turn_of()[1:],
    ]
    assert rules_at(lines) == {("JSONL-1", 1)}


@pytest.mark.spec("JSON-1", "CHECK-2")
@pytest.mark.parametrize("digits", [400, 5000])
def test_an_integer_too_large_for_a_double_is_a_json_1_finding(digits: int) -> None:
    big = "1" + "0" * (digits - 1)
    lines = turn_of(
        event(1, "tool/call", f'{{"n":{big}}}'),
        event(
            2,
            "tool/call",
            f'{{"n":[[{big}]]}}'.replace("[[", "[" * 3000, 1).replace(
                "]]", "]" * 3000, 1
            ),
        ),
    )
    assert rules_at(lines) == {("JSON-1", 3), ("JSON-1", 4)}
    assert rules_at(lines, thorough=True) == {("JSON-1", 3), ("JSON-1", 4)}


def _holds_long_run(raw: bytes) -> bool:
    """The definition `has_long_integer` keeps: 309 digits in a row."""
    return re.search(rb"[0-9]{309}", raw) is not None


@pytest.mark.spec("JSON-1")
@settings(max_examples=scaled_examples(300))
@given(
    st.lists(
        st.tuples(st.integers(0, 400), st.sampled_from([b" ", b",", b"x", b".."])),
        max_size=12,
    )
)
def test_a_line_holds_a_long_integer_exactly_where_309_digits_run(
    pieces: list[tuple[int, bytes]],
) -> None:
    # runs of digits near 309 long at every offset, so a run can fall anywhere
    # against the sample of one byte in 103 that rules most lines out
    raw = b"".join(b"7" * digits + gap for digits, gap in pieces) + b"\n"
    assert has_long_integer(raw) == _holds_long_run(raw)


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize("offset", [0, 1, 102, 103, WINDOW - 200, WINDOW + 5])
@pytest.mark.parametrize("length", [308, 309])
def test_a_long_line_holds_a_long_integer_wherever_it_lies(
    offset: int, length: int
) -> None:
    raw = b"x" * offset + b"9" * length + b"x" * (WINDOW + 400 - offset) + b"\n"
    assert len(raw) > WINDOW
    assert has_long_integer(raw) == (length == 309)
    assert has_long_integer(bytearray(raw)) == (length == 309)


@pytest.mark.spec("SURF-2", "SURF-3")
def test_a_replace_costs_the_run_it_removes_not_the_whole_surface() -> None:
    import time

    from reqfold.conformance.check.surface import ReplaceRefused, Surface

    surface = Surface(derive=True)
    count = 40_000
    for seq in range(count):
        surface.append(seq, {"role": "user", "content": []})
    began = time.perf_counter()
    for seq in range(count - 1, -1, -1):  # each replace near the far end
        shadowed = surface.shadowed(seq, seq)
        assert shadowed == [seq]
        surface.replace(count + seq, shadowed, None)
    assert time.perf_counter() - began < 5  # was ~40 s with list.index
    assert surface.seqs[:2] == [count, count + 1]
    assert isinstance(surface.shadowed(count + 5, count + 4), ReplaceRefused)
    assert surface.shadowed(count + 4, count + 6) == [count + 4, count + 5, count + 6]


@pytest.mark.spec("LOG-7")
def test_unknown_event_types_are_counted_by_name_only_up_to_a_cap() -> None:
    from reqfold.conformance.check.log_rules import UNKNOWN_TYPES_KEPT
    from reqfold.conformance.check.report import FileReport, render_text

    count = UNKNOWN_TYPES_KEPT + 50
    lines = turn_of(*(event(i + 1, f"plugin/t{i}", "{}") for i in range(count)))
    report = check_lines(lines)
    assert len(report.summary.unknown_types) == UNKNOWN_TYPES_KEPT
    assert report.summary.unknown_other == 50
    assert report.dump()["unknown_events"] == count
    assert render_text(report).count("plugin/t") == UNKNOWN_TYPES_KEPT
    assert isinstance(report, FileReport)


@pytest.mark.spec("LOG-2")
def test_a_seq_that_goes_back_once_is_reported_once() -> None:
    lines = turn_of(
        event(1, "plugin/a", "{}"),
        event(2, "plugin/a", "{}"),
        event(1, "plugin/a", "{}"),  # goes back
        event(3, "plugin/a", "{}"),  # and the log resumes
    )
    lines[-1] = event(4, "turn/end", '{"turn":1,"reason":{}}')
    assert rules_at(lines) == {("LOG-2", 5)}


@pytest.mark.spec("JSONL-4")
def test_a_damaged_line_with_invalid_utf8_gets_one_finding() -> None:
    lines = turn_of(b'{"type":"tool/call","seq":1,\xff\xfe garbage\n')
    report = check_lines(lines)
    assert [(f.rule, f.line) for f in report.findings] == [("JSONL-4", 3)]


@pytest.mark.spec("JSON-1")
def test_a_lone_surrogate_deep_inside_a_value_is_found_iteratively() -> None:
    deep = "[" * 5000 + '"\\ud800"' + "]" * 5000
    lines = turn_of(event(1, "tool/call", f'{{"args":{deep}}}'))
    assert rules_at(lines) == {("JSON-1", 3)}
    paired = "[" * 5000 + '"\\ud83d\\ude00"' + "]" * 5000
    assert rules_at(turn_of(event(1, "tool/call", f'{{"args":{paired}}}'))) == set()


@pytest.mark.spec("SURF-4", "LOG-5", "CHECK-2")
@pytest.mark.parametrize("sources", ["[[1],[2]]", '[{"seq":1},2]', "[1,[2]]"])
def test_sources_holding_a_list_or_an_object_are_an_ordinary_finding(
    sources: str,
) -> None:
    append = b',"surfaceOp":"append"}\n'
    replace = (
        f',"sourceEventSeqs":{sources},'
        '"surfaceOp":{"op":"replace","start":1,"end":2}}\n'
    ).encode()
    lines = turn_of(
        event(1, "user/message", '{"content":[]}')[:-2] + append,
        event(2, "user/message", '{"content":[]}')[:-2] + append,
        event(3, "user/message", '{"content":[]}')[:-2] + replace,
    )
    report = check_lines(lines)
    assert {(f.rule, f.line, f.level) for f in report.findings} == {
        ("LOG-5", 5, "MUST"),
        ("SURF-4", 5, "SHOULD"),
    }
    assert report.outcome == "fail"


def test_a_crash_inside_a_rule_is_an_error_not_a_finding_against_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reqfold.conformance.check.turn_rules import TurnRules

    def crash(*args: object) -> None:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(TurnRules, "step_start", crash)
    lines = turn_of(
        event(1, "step/start", '{"turn":1,"step":1}'),
        event(2, "plugin/x", "{}"),
        event(9, "plugin/x", "{}"),  # a gap: the check goes on after the crash
    )
    report = check_lines(lines)
    errors = [f for f in report.findings if f.level == "ERROR"]
    assert [(f.rule, f.line) for f in errors] == [("CHECK-2", 3)]
    assert "could not check this line (RuntimeError: a bug in a rule)" in (
        errors[0].message
    )
    must = {(f.rule, f.line) for f in report.findings if f.level == "MUST"}
    assert ("LOG-2", 5) in must
    assert {rule for rule, _ in must} == {"LOG-2"}
    assert (report.outcome, report.status) == ("fail", 1)
    clean = turn_of(event(1, "step/start", '{"turn":1,"step":1}'))
    alone = check_lines(clean)
    assert [(f.rule, f.level) for f in alone.findings] == [("CHECK-2", "ERROR")]
    assert (alone.outcome, alone.status, alone.ok) == ("error", 3, False)
    assert alone.dump()["errors"] == 1
    assert alone.dump()["must"] == 0


@pytest.mark.spec("JSON-2")
def test_an_expected_null_is_shown_as_null_and_absence_as_absence() -> None:
    from reqfold.conformance.check.findings import finding
    from reqfold.conformance.check.report import FileReport, render_text

    null = finding("REQ-1", 3, 1, "differs", expected=None, found="")
    nothing = finding("REQ-1", 4, 2, "differs", found="x")
    assert null.dump()["expected"] is None
    assert "expected" in null.dump()
    assert "expected" not in nothing.dump()
    report = FileReport(path="a.jsonl")
    report.collect([null, nothing])
    text = render_text(report)
    assert '      expected: null\n      found:    ""' in text
    assert text.count("expected:") == 1


def in_pieces(lines: list[bytes], size: int) -> list[bytes]:
    """The lines as ``readline(size)`` gives them: a long line in pieces."""
    return [line[at : at + size] for line in lines for at in range(0, len(line), size)]


@pytest.mark.spec("JSONL-2", "JSONL-3", "LOG-2")
@pytest.mark.parametrize(
    "name",
    [
        "valid/session-prefix.jsonl",
        "JSONL-3-torn-tail.jsonl",
        "JSONL-2-no-final-newline.jsonl",
        "LOG-2-gap.jsonl",
        "WRITER-3-padded-delta.jsonl",
    ],
)
def test_lines_given_in_pieces_are_checked_like_whole_lines(name: str) -> None:
    from pathlib import Path

    path = Path(__file__).parent / "check_fixtures" / name
    lines = path.read_bytes().splitlines(keepends=True)
    whole = check_lines(lines)
    for size in (7, 100):
        pieces = check_lines(in_pieces(lines, size))
        assert pieces.findings == whole.findings
        assert pieces.summary == whole.summary


@pytest.mark.spec("JSON-1", "LOG-1", "TURN-1")
def test_a_line_over_a_mebibyte_is_compared_in_place_and_still_judged() -> None:
    pad = "x" * (2 << 20)
    canonical = event(0, "turn/start", f'{{"turn":1,"note":"{pad}"}}')
    duplicate = event(0, "turn/start", f'{{"turn":1,"note":"{pad}","turn":1}}')
    spaced = canonical.replace(b'"data":', b'"data": ')
    wrong_turn = event(0, "turn/start", f'{{"turn":2,"note":"{pad}"}}')
    for first, expected in [
        (canonical, set()),
        (duplicate, {("JSON-1", 2)}),
        (spaced, set()),  # not canonical, read strictly: no rule is broken
        (wrong_turn, {("TURN-1", 2)}),
    ]:
        lines = [STORAGE, first, event(1, "turn/end", '{"turn":1,"reason":{}}')]
        if first is wrong_turn:
            lines[-1] = event(1, "turn/end", '{"turn":2,"reason":{}}')
        assert rules_at(in_pieces(lines, 1 << 20)) == expected, first[:40]
        assert rules_at(lines) == expected


@pytest.mark.spec("LOG-4")
def test_a_compaction_event_carrying_a_surface_op_is_reported() -> None:
    lines = turn_of(
        event(1, "compact/start", '{"turn":1}')[:-2] + b',"surfaceOp":"append"}\n',
    )
    assert ("LOG-4", 3) in rules_at(lines)


def test_what_a_line_showed_before_a_rule_crashed_on_it_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reqfold.conformance.check.turn_rules import TurnRules

    def crash(*args: object) -> None:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(TurnRules, "step_start", crash)
    lines = turn_of(event(5, "step/start", '{"turn":1,"step":1}'))  # a gap: LOG-2
    report = check_lines(lines)
    assert [(f.rule, f.line) for f in report.findings if f.line == 3] == [
        ("LOG-2", 3),
        ("CHECK-2", 3),
    ]


def test_a_handler_given_as_an_override_replaces_the_rules_of_its_type() -> None:
    def crash(*args: object) -> list[Finding]:
        raise RuntimeError("a bug in a rule")

    report = check_lines(
        turn_of(event(1, "step/start", '{"turn":1,"step":1}')),
        overrides={"step/start": crash},
    )
    assert [(f.rule, f.line, f.level) for f in report.findings] == [
        ("CHECK-2", 3, "ERROR")
    ]
