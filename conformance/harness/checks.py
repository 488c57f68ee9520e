"""Judging a scenario's evidence: every check names the rules it shows.

Pure: `judge` takes the `Evidence` a scenario run left (the log the
harness wrote, the requests the fake captured for its session, what each
send did, contributor call counts) and returns one `Check` per check.
The checks, in order:

- ``log``: every rule of ``reqfold check`` on the log, with the
  reconstruction theorem against the captured requests (one result per
  rule the checker applies in the revision; it fails when the checker
  reports a finding of that rule);
- the scenario's expectations, one kind at a time
  (`reqfold.conformance.harness.expectations`): ``end`` and ``requests``
  of each send, then ``calls``, then ``absent`` and ``request`` in the
  order the scenario lists them;
- ``ended`` and ``steps``: each send's ``turn/ended`` against the turn
  its log records (TURN-5), and how many steps that turn opened;
- ``anchor`` and ``cache`` (`reqfold.conformance.harness.stability`): each
  instance's first request logs its anchoring snapshot, and each request
  extends the previous one unless the log says why not.

A harness that wrote no log fails (JSONL-1). A check the evidence cannot
support (a capture that matches no step, a log the checker could not read)
is an error or is left out, never a pass.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

from reqfold.conformance.check import (
    APPLIED_RULES,
    ERROR,
    MUST,
    RECONSTRUCTION_RULES,
    SHOULD,
    check_lines,
    read_captures,
)
from reqfold.conformance.check.findings import Finding
from reqfold.conformance.check.reconstruction import (
    REFUSED_AS_TOO_LARGE,
    refused_unread,
)
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.expectations import (
    KINDS,
    SCENARIO,
    SEND,
    Declared,
    LoggedTurn,
    judge_expectation,
    unscripted,
)
from reqfold.conformance.harness.log_file import (
    MAX_LINES_IN_MEMORY,
    MAX_LOG_IN_MEMORY,
    log_pieces,
)
from reqfold.conformance.harness.results import (
    COMPARED,
    NO_FACTS,
    Facts,
    Judge,
    passed,
)
from reqfold.conformance.harness.stability import stability_checks
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.rules import load_rules
from reqfold.conformance.verdict import Check
from reqfold.fakes import CapturedRequest, dump_capture_jsonl
from reqfold.reference.errors import CodecError
from reqfold.reference.json_values import JsonObject

READER_DUTIES = frozenset({"CHECK-2", "JSONL-3"})
"""Rules the checker applies that bind a reader of logs, not the harness
that wrote the log: they are not tallied for the harness."""


def judge_leaks(evidence: Evidence) -> list[Check]:
    """The checks part of a run can prove broken: for what a run left before
    it broke. Every scenario kind is run with `Declared.partial`, and each
    kind's check says what part of a run proves: a sentinel found
    (``absent``) and a contributor called more often than expected
    (``calls``: a count only grows) stay broken whatever the rest of the run
    would have done; the caller keeps only failures."""
    judge = Judge(evidence)
    _scenario_expectations(judge, partial=True)
    return judge.results


def judge(evidence: Evidence) -> list[Check]:
    """Every check of one scenario run, in a fixed order."""
    judge = Judge(evidence)
    events = None if evidence.log_left_on_disk else _events(evidence.log)
    log_failed = _log_checks(judge)
    _send_checks(judge)
    _scenario_expectations(judge)
    if evidence.log_left_on_disk:
        if not log_failed:
            _cannot_judge_cache(
                judge,
                f"the log ({evidence.log_bytes} bytes) is larger than these checks"
                f" hold in memory ({MAX_LOG_IN_MEMORY} bytes, {MAX_LINES_IN_MEMORY}"
                " lines); the log's rules were checked from the file",
            )
    elif events is None:
        if not log_failed:
            _cannot_judge_cache(judge, "the log's lines are not all JSON events")
    else:
        _turn_checks(judge, events)
        try:
            stability_checks(judge, events, _seed_length(evidence.log))
        except (CodecError, KeyError, TypeError, ValueError, IndexError) as error:
            if not log_failed:  # the log checks say why; otherwise it is ours
                _cannot_judge_cache(judge, f"{type(error).__name__}: {error}")
    return judge.results


def _cannot_judge_cache(judge: Judge, why: str) -> None:
    """The anchor and cache checks could not run on a log that passed the checker."""
    judge.add(
        "cache",
        ("WRITER-1", "CACHE-1", "CACHE-3"),
        Outcome.ERROR,
        f"the anchor and cache checks could not read the log: {why}",
    )


# ---------------------------------------------------------------- the log


def _capture_lines(captures: Sequence[CapturedRequest]) -> list[bytes]:
    return dump_capture_jsonl(captures).encode("utf-8").splitlines()


def _log_checks(judge: Judge) -> bool:
    """The log's rules; True when any of them did not pass."""
    evidence = judge.evidence
    revision = evidence.revision
    if not evidence.log and not evidence.log_left_on_disk:
        judge.add(
            "log",
            ("JSONL-1",),
            Outcome.FAIL,
            f"the harness wrote no log at {evidence.log_path}",
        )
        return True
    # A request the fake refused as too large was not read whole, so no
    # rebuild can match it: `read_captures` leaves it out of the comparison
    # (its step has no response, so the checker lets it go unmatched), and
    # it gives no verdict of its own; every other request is compared.
    for capture in evidence.captures:
        if not refused_unread(capture.status, capture.body):
            continue
        judge.add(
            f"refused/request-{capture.index}",
            ("CHECK-1",),
            Outcome.ERROR,
            f"request {capture.index} was refused by the fake provider as too"
            f" large (HTTP {REFUSED_AS_TOO_LARGE}, over its body limit): it was"
            " not read whole, so it is not compared with the log",
        )
    # a log too large to hold is streamed from its file, as reqfold check does
    report = check_lines(
        log_pieces(evidence.log_path)
        if evidence.log_left_on_disk
        else io.BytesIO(evidence.log),
        path=str(evidence.log_path),
        revision=revision,
        captures=(
            read_captures(_capture_lines(evidence.captures))
            if evidence.wire_compared
            else None
        ),
    )
    judge.one_shots = frozenset(report.summary.one_shot_requests)
    registry = load_rules()
    first: dict[str, Finding] = {}
    failing: set[str] = set()
    for found in report.findings:
        first.setdefault(found.rule, found)
        if found.level == MUST:
            failing.add(found.rule)
    if report.counts[ERROR]:
        # The checker itself failed on a line (an ERROR finding, CHECK-2): a
        # bug of ours is no verdict, so no rule passes here; but a MUST rule
        # it found broken elsewhere still fails, as in ``reqfold check``.
        judge.add(
            "log",
            ("CHECK-2",),
            Outcome.ERROR,
            f"the checker could not check the log: {_said(first['CHECK-2'])}",
        )
        for rule in sorted(failing - READER_DUTIES - {"CHECK-2"}):
            _broken_rule(judge, first[rule], MUST)
        return True
    harness_rules = [
        rule
        for rule in (*APPLIED_RULES, *RECONSTRUCTION_RULES)
        if rule not in READER_DUTIES and registry[rule].applies_to(revision)
    ]
    extra = sorted(set(first) - set(harness_rules) - READER_DUTIES)
    for rule in [*harness_rules, *extra]:
        if rule not in first:
            judge.add(f"log/{rule}", (rule,), Outcome.PASS)
            continue
        _broken_rule(judge, first[rule], MUST if rule in failing else SHOULD)
    return any(rule in first for rule in [*harness_rules, *extra])


def _broken_rule(judge: Judge, finding: Finding, level: str) -> None:
    """``log/<RULE>`` fails (or warns, at `level`) with the rule's first finding."""
    judge.add(
        f"log/{finding.rule}",
        (finding.rule,),
        Outcome.FAIL,
        _said(finding),
        level=level,
        facts=_finding_facts(finding),
    )


def _where(finding: Finding) -> str:
    """``line N`` or ``line N, seq S``: where in the log a finding is."""
    return f"line {finding.line}" + (
        f", seq {finding.seq}" if finding.seq is not None else ""
    )


def _said(finding: Finding) -> str:
    """A log check's message: the checker's first finding of the rule, with
    what it expected and found (a side it does not say is left out)."""
    sides = [
        f"{word} {value}"
        for word, value in (("expected", finding.expected), ("found", finding.found))
        if value is not None
    ]
    detail = finding.message + (f" ({', '.join(sides)})" if sides else "")
    return f"{_where(finding)}: {detail}"


def _finding_facts(finding: Finding) -> Facts:
    """What a log check's reproduction shows: the first finding's place,
    expected and found values (as the checker renders them) and path."""
    where = _where(finding)
    if finding.expected is None and finding.found is None:
        return NO_FACTS
    return Facts(
        expected={"at": where, "value": finding.expected},
        found={"at": where, "value": finding.found},
        difference=finding.path,
    )


def _seed_length(log: bytes) -> int:
    """How many events the storage line says were seeded (0 when unreadable)."""
    first = log.split(b"\n", 1)[0]
    try:
        storage = json.loads(first)
    except ValueError:
        return 0
    seeded = storage.get("seedLength") if isinstance(storage, dict) else None
    return seeded if isinstance(seeded, int) and seeded >= 0 else 0


def _events(log: bytes) -> list[JsonObject] | None:
    """The log's events, or None when any line is not a JSON event; a torn
    tail (a partial last line, not JSON) is left out, as the checker warns
    of it and finds every line before it intact (JSONL-3)."""
    events: list[JsonObject] = []
    lines = log.splitlines()
    for number, line in enumerate(lines):
        if number == 0 or not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            if number == len(lines) - 1 and not log.endswith(b"\n"):
                break  # the torn tail
            return None
        if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
            return None
        events.append(event)
    return events


# ---------------------------------------------------------------- sends


def _send_checks(judge: Judge) -> None:
    """Each reaction that never fired (no verdict), then each send's own
    expectations (`SEND` kinds but ``steps``, which `_turn_checks` judges)."""
    scenario_rules = judge.evidence.scenario.rules
    for number, unfired in enumerate(judge.evidence.unfired, start=1):
        judge.add(
            f"reaction-{number}", scenario_rules, Outcome.ERROR, unscripted(unfired)
        )
    for number, send in enumerate(judge.evidence.sends, start=1):
        for kind in KINDS.values():
            if kind.where == SEND and kind.name != "steps" and kind.name in send.expect:
                judge_expectation(judge, kind, Declared(item=send.expect, send=number))


def _scenario_expectations(judge: Judge, *, partial: bool = False) -> None:
    """Every item of the scenario's ``expect``, a `Kind.round` at a time."""
    items = [
        (KINDS[str(item["check"])], item) for item in judge.evidence.scenario.expect
    ]
    for round_ in sorted({kind.round for kind, _ in items}):
        for kind, item in items:
            if kind.round == round_ and kind.where == SCENARIO:
                judge_expectation(judge, kind, Declared(item=item, partial=partial))


def _turn_checks(judge: Judge, events: list[JsonObject]) -> None:
    """Each send's turn as the log records it, against what the adapter said.

    ``send-N/ended`` [TURN-5]: the ``turn/ended`` notification names the
    turn the send opened in the log (the first ``turn/start`` after the
    events logged before the send), with the kind of its ``turn/end``
    reason and, when the log's reason has one, the same abort ``reason``.
    ``send-N/steps``: how many steps that turn opened, where the send
    expects a number (``PREFIX-5``: an interrupted composition opens none).
    A send whose turn never started (``turn`` null) has neither check: its
    ``end`` check says what was expected.
    """
    sends = judge.evidence.sends
    for number, send in enumerate(sends, start=1):
        if send.turn is None:
            continue
        name = f"send-{number}"
        limit = sends[number].logged_before if number < len(sends) else len(events)
        span = _logged_turn(events, send.logged_before, max(limit, send.logged_before))
        told = f"turn/ended said turn {send.turn} ended {send.reason.get('kind')!r}"
        said: JsonObject = {"turn": send.turn, "end": send.reason.get("kind")}
        if span is None:
            judge.add(
                f"{name}/ended",
                ("TURN-5",),
                Outcome.FAIL,
                f"{told}, but the log holds no turn/start after the"
                f" {send.logged_before} event(s) logged before the send",
                facts=Facts(
                    step=judge.send_step(number),
                    expected=said,
                    found={"turn": None, "end": None},
                    difference=COMPARED,
                ),
            )
            continue
        start, end = span
        logged_turn = events[start]["data"].get("turn")
        problems = []
        logged_end: JsonObject = {"turn": logged_turn, "end": None}
        if logged_turn != send.turn:
            problems.append(f"the log's turn is {logged_turn!r}")
        if end is None:
            problems.append(f"the log has no turn/end for turn {logged_turn!r}")
        else:
            logged = events[end]["data"].get("reason")
            logged = logged if isinstance(logged, dict) else {}
            logged_end["end"] = logged.get("kind")
            if logged.get("kind") != send.reason.get("kind"):
                problems.append(
                    f"the log's turn/end (seq {events[end].get('seq')}) says"
                    f" {logged.get('kind')!r}"
                )
            elif "reason" in logged and logged["reason"] != send.reason.get("reason"):
                problems.append(
                    f"the log's reason is {logged['reason']!r}, turn/ended's"
                    f" {send.reason.get('reason')!r}"
                )
        if "reason" in send.reason:
            said["reason"] = send.reason["reason"]
            if end is not None and isinstance(logged, dict):
                logged_end["reason"] = logged.get("reason")
        judge.add(
            f"{name}/ended",
            ("TURN-5",),
            passed(not problems),
            f"{told}; " + "; ".join(problems) if problems else "",
            facts=Facts(
                step=judge.send_step(number),
                expected=said,
                found=logged_end,
                difference=COMPARED,
            ),
        )
        if "steps" in send.expect:
            stop = end if end is not None else limit
            opened = sum(
                1 for event in events[start:stop] if event.get("type") == "step/start"
            )
            judge_expectation(
                judge,
                KINDS["steps"],
                Declared(
                    item=send.expect,
                    send=number,
                    logged=LoggedTurn(turn=logged_turn, opened=opened),
                ),
            )


def _logged_turn(
    events: list[JsonObject], first: int, limit: int
) -> tuple[int, int | None] | None:
    """The positions of the first ``turn/start`` in ``events[first:limit]`` and
    of the ``turn/end`` of the same turn after it (None when there is none)."""
    for start in range(first, min(limit, len(events))):
        if events[start].get("type") != "turn/start":
            continue
        turn = events[start]["data"].get("turn")
        for end in range(start + 1, len(events)):
            event = events[end]
            if event.get("type") == "turn/end" and event["data"].get("turn") == turn:
                return start, end
        return start, None
    return None
