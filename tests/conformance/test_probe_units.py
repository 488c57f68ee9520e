"""The pure parts of ``reqfold probe``: turn plans, commands, the log watch,
the expected counts and the cache timeline (no process, no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.probe.cli import NO_VERDICT_REASONS
from reqfold.conformance.probe.driver import ProbeEvidence, ProcessRecord, TurnRecord
from reqfold.conformance.probe.judge import choose_revision, count_checks, timeline
from reqfold.conformance.probe.logs import LogFinder, LogWatch
from reqfold.conformance.probe.turns import (
    DEFAULT_TURNS,
    fill,
    plan_turns,
    split_command,
)
from reqfold.conformance.verdict import Check, exit_status, verdict_text
from reqfold.fakes import CapturedRequest
from reqfold.reference.revisions import Revision


def test_without_a_file_the_default_turns_are_fed_and_the_last_one_resumes() -> None:
    assert plan_turns(None, resume=False).first == DEFAULT_TURNS
    plan = plan_turns(None, resume=True)
    assert plan.first == DEFAULT_TURNS[:-1]
    assert plan.resumed == DEFAULT_TURNS[-1:]


def test_a_separator_line_splits_the_turns_and_needs_a_resume_command() -> None:
    plan = plan_turns("a\n# skipped\n\n---\nb\nc\n", resume=True)
    assert (plan.first, plan.resumed) == (("a",), ("b", "c"))
    with pytest.raises(ValueError, match="no --resume-cmd"):
        plan_turns("a\n---\nb\n", resume=False)
    with pytest.raises(ValueError, match="empty"):
        plan_turns("# nothing\n", resume=False)
    with pytest.raises(ValueError, match="two or more turns"):
        plan_turns("only one\n", resume=True)
    with pytest.raises(ValueError, match="no turn left for the resumed process"):
        plan_turns("a\n---\n", resume=True)


def test_placeholders_are_filled_word_by_word_so_spaces_survive() -> None:
    argv = split_command("chat --resume {log_path} --id={session_id}", "--cmd")
    filled = fill(argv, {"log_path": "/a b/s.jsonl", "session_id": "s1"})
    assert filled == ["chat", "--resume", "/a b/s.jsonl", "--id=s1"]
    with pytest.raises(ValueError, match="--resume-cmd is empty"):
        split_command("  ", "--resume-cmd")


def test_the_log_watch_counts_complete_lines_only(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(
        b'{"type":"session","version":0,"id":"s1","createdAt":1}\n'
        b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
        b'{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{}}}\n'
        b'{"type":"turn/en'
    )
    watch = LogWatch(str(log))
    watch.refresh()
    assert (watch.session_id, watch.events, watch.turn_ends) == ("s1", 2, 1)
    with log.open("ab") as handle:
        handle.write(b'd","seq":2,"time":1,"data":{"turn":2,"reason":{}}}\n')
    watch.refresh()
    assert (watch.events, watch.turn_ends) == (3, 2)


def test_the_finder_reports_new_and_changed_logs_newest_first(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text("x\n")
    finder = LogFinder(tmp_path, None)
    mark = finder.mark()
    assert finder.changed_since(mark) == []
    (tmp_path / "sub").mkdir()
    new = tmp_path / "sub" / "new.jsonl"
    new.write_text("y\n")
    assert finder.changed_since(mark) == [str(new)]
    glob = LogFinder(None, str(tmp_path / "**" / "*.jsonl"))
    assert set(glob.candidates()) == {str(old), str(new)}
    # a session file (storage line first) wins over a newer other JSONL file
    session = tmp_path / "session.jsonl"
    session.write_text('{"type":"session","version":0,"id":"s","createdAt":1}\n')
    other = tmp_path / "history.jsonl"
    other.write_text('{"prompt":"hi"}\n')
    assert finder.changed_since(mark)[0] == str(session)


def test_the_log_watch_reads_a_rewritten_log_again(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    storage = b'{"type":"session","version":0,"id":"s1","createdAt":1}\n'
    end = b'{"type":"turn/end","seq":0,"time":1,"data":{"turn":1,"reason":{}}}\n'
    log.write_bytes(storage + end + end)
    watch = LogWatch(str(log))
    watch.refresh()
    assert watch.turn_ends == 2
    log.write_bytes(storage + end)
    watch.refresh()
    assert (watch.events, watch.turn_ends) == (1, 1)


def _run(
    turns: list[tuple[int, int, bool]], planned: int, status: int = 0
) -> ProcessRecord:
    record = ProcessRecord(name="run 1", argv=["h"], key_digest="k", planned=planned)
    record.turns = [
        TurnRecord(text="t", captures_before=b, captures_after=a, handled=h)
        for b, a, h in turns
    ]
    record.exit_status = status
    record.turn_ends_after = sum(1 for _, _, handled in turns if handled)
    record.problem = None if len(turns) == planned else "it stopped"
    return record


@pytest.mark.spec("CHECK-3")
def test_a_turn_that_ended_without_a_request_fails_the_expected_counts() -> None:
    evidence = ProbeEvidence(log_path="s.jsonl", log=b"x\n")
    evidence.runs = [_run([(0, 1, True), (1, 1, True)], planned=2)]
    [check] = count_checks(evidence)
    assert check.outcome is Outcome.FAIL
    assert "turn(s) 2 of run 1 ended in the log without a request" in check.message
    assert "exited 0 all the same" in check.message


@pytest.mark.spec("CHECK-3")
def test_fewer_turns_handled_than_fed_fails_and_all_handled_passes() -> None:
    evidence = ProbeEvidence(log_path="s.jsonl", log=b"x\n")
    evidence.runs = [_run([(0, 1, True)], planned=3)]
    [check] = count_checks(evidence)
    assert check.outcome is Outcome.FAIL
    assert check.message.startswith("1 of 3 turn(s) handled: it stopped")
    evidence.runs = [_run([(0, 1, True), (1, 3, True)], planned=2)]
    assert [c.outcome for c in count_checks(evidence)] == [Outcome.PASS]


@pytest.mark.spec("CHECK-3")
def test_turns_paced_by_the_prompt_must_still_show_in_the_log() -> None:
    evidence = ProbeEvidence(log_path="s.jsonl", log=b"x\n")
    record = _run([(0, 1, True), (1, 2, True)], planned=2)
    record.turn_ends_after = 1
    evidence.runs = [record]
    [check] = count_checks(evidence)
    assert check.outcome is Outcome.FAIL
    assert "the log shows 1 turn(s) ended for the 2 this process handled" in (
        check.message
    )


def test_the_revision_is_forced_then_declared_then_inferred() -> None:
    declared = (
        b'{"type":"session","version":0,"id":"s","createdAt":1,'
        b'"revision":"header-events"}\n'
    )
    assert choose_revision(declared, None).revision is Revision.HEADER_EVENTS
    assert choose_revision(declared, Revision.SESSION_PREFIX).source == "--revision"
    bare = b'{"type":"session","version":0,"id":"s","createdAt":1}\n'
    delta = (
        b'{"type":"request/header-delta","seq":0,"time":1,'
        b'"data":{"messageSuffix":[]}}\n'
    )
    choice = choose_revision(bare + delta, None)
    assert choice.revision is Revision.REQUEST_MESSAGES
    assert choice.source.startswith("inferred from line 2")


def _capture(index: int, diagnostic: dict[str, object]) -> CapturedRequest:
    return CapturedRequest(
        index=index,
        method="POST",
        path="/chat/completions",
        headers=(),
        raw_body=b"{}",
        body={},
        status=200,
        at=0.0,
        diagnostic=diagnostic,  # type: ignore[arg-type]
    )


def _diagnostic(relation: str, cached: int, **more: object) -> dict[str, object]:
    return {
        "prompt_tokens": 300,
        "cached_tokens": cached,
        "uncached_tokens": 300 - cached,
        "matched_tokens": cached,
        "lost_tokens": 0,
        "relation": relation,
        "closest_request": more.pop("closest", None),
        "shared_tokens": 0,
        "divergence": more.pop("divergence", None),
        "echo_divergence": None,
        **more,
    }


def test_the_timeline_marks_where_the_cache_broke_and_attributes_turns() -> None:
    divergence = {
        "segment": "messages[0]",
        "message_index": 0,
        "field": "messages[0].content",
        "char_offset": 14,
        "segment_token_offset": 3,
        "earlier": "Current time: 1",
        "current": "Current time: 2",
    }
    evidence = ProbeEvidence(log_path="s.jsonl", log=b"x\n")
    evidence.runs = [_run([(0, 2, True), (2, 3, True)], planned=2)]
    evidence.captures = [
        _capture(0, _diagnostic("first", 0)),
        _capture(1, _diagnostic("append", 256, closest=0)),
        _capture(2, _diagnostic("diverged", 0, closest=1, divergence=divergence)),
    ]
    evidence.capture_runs = ["run 1"] * 3
    rows = timeline(evidence)
    assert [(r.turn, r.cached, r.uncached, r.broke) for r in rows] == [
        (1, 0, 300, False),
        (1, 256, 44, False),
        (2, 0, 300, True),
    ]
    assert rows[1].note == "extends #0"
    assert rows[2].note.startswith(
        "cache broke: differs from #1 at messages[0].content, character 14"
    )


def test_the_timeline_says_a_shape_only_change_and_what_the_provider_said() -> None:
    shape = {
        "segment": "messages[1]",
        "message_index": 1,
        "field": "messages[1].content",
        "char_offset": 0,
        "segment_token_offset": 120,
        "earlier": '"hello"',
        "current": '[{"type":"text","text":"hello"}]',
        "cause": "content shape",
    }
    evidence = ProbeEvidence(log_path="s.jsonl", log=b"x\n")
    evidence.runs = [_run([(0, 2, True), (2, 3, True)], planned=2)]
    evidence.captures = [
        _capture(0, _diagnostic("first", 0)),
        _capture(
            1,
            _diagnostic(
                "diverged",
                0,
                closest=0,
                divergence=shape,
                provider={
                    "diagnostics": {
                        "cache_miss_reason": {
                            "type": "messages_changed",
                            "cache_missed_input_tokens": 180,
                        }
                    }
                },
            ),
        ),
        _capture(
            2,
            _diagnostic(
                "append",
                256,
                closest=1,
                provider={"prompt_cache_diagnostics": {"type": "cache_hit"}},
            ),
        ),
    ]
    evidence.capture_runs = ["run 1"] * 3
    rows = timeline(evidence)
    assert rows[1].note.startswith(
        "cache broke: differs from #0 at messages[1].content (content shape only:"
        " a string against one text part), character 0"
    )
    assert rows[1].note.endswith(
        "; the provider said: messages_changed, 180 tokens missed"
    )
    assert rows[2].note == "extends #1; the provider said: cache_hit"


def test_the_run_line_counts_requests_the_fake_answered_with_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from reqfold.conformance.probe.cli import _print_run

    evidence = ProbeEvidence(log_path="s.jsonl", log=b"x\n")
    record = _run([(0, 2, True)], planned=1)
    evidence.runs = [record]
    evidence.captures = [_capture(0, _diagnostic("first", 0)), _refused(1)]
    evidence.capture_runs = ["run 1", "run 1"]
    _print_run(record, evidence)
    assert "2 request(s) (1 answered with an error); exit status 0" in (
        capsys.readouterr().out
    )


def _refused(index: int) -> CapturedRequest:
    return CapturedRequest(
        index=index,
        method="POST",
        path="/chat/completions",
        headers=(),
        raw_body=b"{}",
        body={},
        status=400,
        at=0.0,
    )


def outcomes(*found: Outcome) -> list[Check]:
    return [
        Check(part="probe", id=f"c{n}", revision="", rules=("REQ-1",), outcome=o)
        for n, o in enumerate(found)
    ]


@pytest.mark.parametrize(
    ("checks", "strict", "keep_lost", "line"),
    [
        (outcomes(Outcome.PASS), False, False, "CONFORMANT"),
        (
            outcomes(Outcome.PASS, Outcome.WARN),
            False,
            False,
            "CONFORMANT (with SHOULD warnings)",
        ),
        (
            outcomes(Outcome.WARN, Outcome.FAIL),
            False,
            False,
            "NOT CONFORMANT: a MUST rule is broken",
        ),
        (
            outcomes(Outcome.PASS, Outcome.WARN),
            True,
            False,
            "NOT CONFORMANT: a SHOULD rule is broken, and --strict counts it",
        ),
        (
            outcomes(Outcome.PASS, Outcome.ERROR),
            False,
            False,
            "NO VERDICT: the harness could not be run or a check errored",
        ),
        (
            outcomes(Outcome.PASS),
            False,
            True,
            "NO VERDICT: the evidence --keep asked for could not be kept",
        ),
    ],
)
def test_the_probe_verdict_line_says_why_in_the_probe_s_own_words(
    checks: list[Check], strict: bool, keep_lost: bool, line: str
) -> None:
    status = exit_status(checks, strict=strict)
    if keep_lost:
        status = 2  # as `_report` does when --keep failed on a pass
    assert verdict_text(status, checks, reasons=NO_VERDICT_REASONS) == line
