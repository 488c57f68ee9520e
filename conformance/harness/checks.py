"""Judging a scenario's evidence: every check names the rules it shows.

Pure: `judge` takes the `Evidence` a scenario run left (the log the
harness wrote, the requests the fake captured for its session, what each
send did, contributor call counts) and returns one `CheckResult` per check.
The checks, in order:

- ``log``: every rule of ``reqfold check`` on the log, with the
  reconstruction theorem against the captured requests (one result per
  rule the checker applies in the revision; it fails when the checker
  reports a finding of that rule);
- ``end`` and ``requests``: how each send's turn ended and how many
  requests it sent, where the scenario names the rules that decide it
  (elsewhere a mismatch means the scenario did not run as scripted: an
  error, no verdict);
- ``calls``: contributor calls per instance (compose once, recompose
  after a discarded composition or on resume);
- ``absent``: a sentinel text appears nowhere in the log or in any
  request the fake received (and so in nothing it cached);
- ``request``: a captured request holds (or lacks) given texts, in order;
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
from reqfold.conformance.check.reconstruction import (
    REFUSED_AS_TOO_LARGE,
    refused_unread,
)
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.log_file import (
    MAX_LINES_IN_MEMORY,
    MAX_LOG_IN_MEMORY,
    lines_holding,
    log_pieces,
)
from reqfold.conformance.harness.results import CheckResult, Judge
from reqfold.conformance.harness.stability import stability_checks
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.rules import load_rules
from reqfold.fakes import CapturedRequest, dump_capture_jsonl
from reqfold.reference.errors import CodecError
from reqfold.reference.json_values import JsonObject

READER_DUTIES = frozenset({"CHECK-2", "JSONL-3"})
"""Rules the checker applies that bind a reader of logs, not the harness
that wrote the log: they are not tallied for the harness."""


def judge_leaks(evidence: Evidence) -> list[CheckResult]:
    """The checks part of a run can prove broken: for what a run left before
    it broke. A sentinel found (``absent``) and a contributor called more
    often than expected (``calls``: a count only grows) stay broken whatever
    the rest of the run would have done; the caller keeps only failures."""
    judge = Judge(evidence)
    _call_checks(judge, only_excess=True)
    _text_checks(judge, only="absent")
    return judge.results


def judge(evidence: Evidence) -> list[CheckResult]:
    """Every check of one scenario run, in a fixed order."""
    judge = Judge(evidence)
    events = None if evidence.log_left_on_disk else _events(evidence.log)
    _log_checks(judge)
    _send_checks(judge)
    _call_checks(judge)
    _text_checks(judge)
    log_failed = any(
        result.check_id.split("/", 2)[1] == "log" and result.outcome is not Outcome.PASS
        for result in judge.results
    )
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
        None,
        f"the anchor and cache checks could not read the log: {why}",
    )


# ---------------------------------------------------------------- the log


def _capture_lines(captures: Sequence[CapturedRequest]) -> list[bytes]:
    return dump_capture_jsonl(captures).encode("utf-8").splitlines()


def _log_checks(judge: Judge) -> None:
    evidence = judge.evidence
    revision = evidence.revision
    if not evidence.log and not evidence.log_left_on_disk:
        judge.add(
            "log",
            ("JSONL-1",),
            False,
            f"the harness wrote no log at {evidence.log_path}",
        )
        return
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
            None,
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
    first: dict[str, str] = {}
    failing: set[str] = set()
    for found in report.findings:
        where = f"line {found.line}" + (
            f", seq {found.seq}" if found.seq is not None else ""
        )
        detail = found.message
        if found.expected is not None or found.found is not None:
            detail += f" (expected {found.expected}, found {found.found})"
        first.setdefault(found.rule, f"{where}: {detail}")
        if found.level == MUST:
            failing.add(found.rule)
    if report.counts[ERROR]:
        # The checker itself failed on a line (an ERROR finding, CHECK-2): a
        # bug of ours is no verdict, so no rule passes here; but a MUST rule
        # it found broken elsewhere still fails, as in ``reqfold check``.
        judge.add(
            "log",
            ("CHECK-2",),
            None,
            f"the checker could not check the log: {first['CHECK-2']}",
        )
        for rule in sorted(failing - READER_DUTIES - {"CHECK-2"}):
            judge.add(f"log/{rule}", (rule,), False, first[rule], level=MUST)
        return
    harness_rules = [
        rule
        for rule in (*APPLIED_RULES, *RECONSTRUCTION_RULES)
        if rule not in READER_DUTIES and registry[rule].applies_to(revision)
    ]
    extra = sorted(set(first) - set(harness_rules) - READER_DUTIES)
    for rule in [*harness_rules, *extra]:
        if rule not in first:
            judge.add(f"log/{rule}", (rule,), True)
            continue
        level = MUST if rule in failing else SHOULD
        judge.add(f"log/{rule}", (rule,), False, first[rule], level=level)


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


def _unscripted(message: str) -> str:
    return f"the scenario did not run as scripted, so it gives no verdict: {message}"


def _send_checks(judge: Judge) -> None:
    scenario_rules = judge.evidence.scenario.rules
    for number, unfired in enumerate(judge.evidence.unfired, start=1):
        judge.add(f"reaction-{number}", scenario_rules, None, _unscripted(unfired))
    for number, send in enumerate(judge.evidence.sends, start=1):
        expect = send.expect
        rules = tuple(expect.get("rules", ()))
        name = f"send-{number}"
        if "end" in expect:
            found = send.reason.get("kind")
            ok = found == expect["end"]
            message = (
                f"turn {send.turn} of {send.instance} ({send.prompt!r}) ended"
                f" {found!r}, expected {expect['end']!r}"
                + (
                    f": {send.reason.get('message')}"
                    if "message" in send.reason
                    else ""
                )
            )
            if rules:
                judge.add(f"{name}/end", rules, ok, "" if ok else message)
            elif not ok:
                judge.add(f"{name}/end", scenario_rules, None, _unscripted(message))
        if "requests" in expect:
            sent = send.captures_after - send.captures_before
            ok = sent == expect["requests"]
            message = (
                f"turn {send.turn} of {send.instance} sent {sent} request(s),"
                f" expected {expect['requests']}"
            )
            if rules:
                judge.add(f"{name}/requests", rules, ok, "" if ok else message)
            elif not ok:
                judge.add(
                    f"{name}/requests", scenario_rules, None, _unscripted(message)
                )


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
        if span is None:
            judge.add(
                f"{name}/ended",
                ("TURN-5",),
                False,
                f"{told}, but the log holds no turn/start after the"
                f" {send.logged_before} event(s) logged before the send",
            )
            continue
        start, end = span
        logged_turn = events[start]["data"].get("turn")
        problems = []
        if logged_turn != send.turn:
            problems.append(f"the log's turn is {logged_turn!r}")
        if end is None:
            problems.append(f"the log has no turn/end for turn {logged_turn!r}")
        else:
            logged = events[end]["data"].get("reason")
            logged = logged if isinstance(logged, dict) else {}
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
        judge.add(
            f"{name}/ended",
            ("TURN-5",),
            not problems,
            f"{told}; " + "; ".join(problems) if problems else "",
        )
        if "steps" in send.expect:
            stop = end if end is not None else limit
            opened = sum(
                1 for event in events[start:stop] if event.get("type") == "step/start"
            )
            expected = send.expect["steps"]
            rules = tuple(send.expect.get("rules", ())) or judge.evidence.scenario.rules
            judge.add(
                f"{name}/steps",
                rules,
                opened == expected,
                ""
                if opened == expected
                else f"turn {logged_turn} of {send.instance} ({send.prompt!r})"
                f" opened {opened} step(s) in the log, expected {expected}",
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


def _call_checks(judge: Judge, *, only_excess: bool = False) -> None:
    """The ``calls`` expectations; with `only_excess`, only those already
    exceeded (the evidence of a run cut short proves no shortfall)."""
    calls = judge.evidence.calls
    for item in judge.evidence.scenario.expect:
        if item["check"] != "calls":
            continue
        key = (item["instance"], item["contributor"])
        found = calls.get(key, 0)
        if only_excess and found <= item["count"]:
            continue
        ok = found == item["count"]
        judge.add(
            f"calls/{item['contributor']}@{item['instance']}",
            item["rules"],
            ok,
            ""
            if ok
            else f"contributor {item['contributor']!r} was called {found} time(s)"
            f" by instance {item['instance']}, expected {item['count']}"
            + (f": {item['why']}" if "why" in item else ""),
        )


def _text_checks(judge: Judge, only: str | None = None) -> None:
    evidence = judge.evidence
    log_lines = evidence.log.splitlines()
    for item in evidence.scenario.expect:
        if only is not None and item["check"] != only:
            continue
        if item["check"] == "absent":
            text = item["text"]
            if evidence.log_left_on_disk:
                places = [
                    f"the log (line {number})"
                    for number in _log_lines_holding(evidence, text)
                ][:1]
            else:
                places = [
                    f"the log (line {number})"
                    for number, line in enumerate(log_lines, start=1)
                    if _holds(line, text)
                ][:1]
            places += [
                f"request {position}"
                for position, capture in enumerate(evidence.captures)
                if _holds(capture.raw_body, text) or text in _body_text(capture)
            ]
            judge.add(
                f"absent/{text}",
                item["rules"],
                not places,
                f"{text!r} was found in {', '.join(places)}" if places else "",
            )
        elif item["check"] == "request":
            _request_check(judge, item)


def _request_check(judge: Judge, item: JsonObject) -> None:
    """One ``request`` expectation: texts in (or not in) one captured request.

    The request is the `index`-th of the session's, or, with `send`, the
    `index`-th that send N (from 1) made, so requests a harness makes
    elsewhere do not shift it.
    """
    index = item["index"]
    captured = len(judge.evidence.captures)
    first, limit = 0, captured
    name = f"request-{index}"
    where = f"request {index}"
    if "send" in item:
        name = f"send-{item['send']}/request-{index}"
        where = f"request {index} of send {item['send']}"
        sends = judge.evidence.sends
        if item["send"] > len(sends):
            judge.add(name, item["rules"], None, f"there is no send {item['send']}")
            return
        send = sends[item["send"] - 1]
        first, limit = send.captures_before, send.captures_after
    # one-shot requests (a summary sent with the session's key) are no step
    steps = [
        capture
        for capture in judge.evidence.captures[first:limit]
        if capture.index not in judge.one_shots
    ]
    if index >= len(steps):
        judge.add(
            name,
            item["rules"],
            False,
            f"{where} was never sent: {captured} request(s) captured",
        )
        return
    capture = steps[index]
    body = _body_text(capture)
    problems = []
    cursor = 0
    for text in item.get("contains", ()):
        found = body.find(text, cursor)
        if found < 0:
            after = "after the texts before it" if cursor else "anywhere"
            problems.append(f"{text!r} is not in it {after}")
        else:
            cursor = found + len(text)
    problems += [f"{text!r} is in it" for text in item.get("lacks", ()) if text in body]
    if "opens" in item:
        opening = _opening(capture)
        if item["opens"] not in opening:
            problems.append(
                f"its first message after the system prompt is {opening[:120]!r},"
                f" not one holding {item['opens']!r}"
            )
    judge.add(
        name,
        item["rules"],
        not problems,
        f"{where}: " + "; ".join(problems) if problems else "",
    )


def _opening(capture: CapturedRequest) -> str:
    """The text of a request's first wire message after its system prompt."""
    body = capture.body
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") != "system":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _log_lines_holding(evidence: Evidence, text: str) -> list[int]:
    """The first line of a log left on disk that holds `text` as written or
    JSON-escaped (``\u00e9``, ``\"``), searched a chunk at a time."""
    spellings = dict.fromkeys(
        (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1])
    )
    found: list[int] = []
    for spelling in spellings:
        try:
            first = next(lines_holding(evidence.log_path, spelling.encode()), None)
        except (OSError, UnicodeEncodeError):
            continue
        if first is not None:
            found.append(first)
    return sorted(found)[:1]


def _holds(raw: bytes, text: str) -> bool:
    """Whether JSON text `raw` holds `text`: as written, or in a decoded string.

    The decoded form finds a text written with escapes (``\\u00e9``,
    ``ensure_ascii``); a line that is not JSON is searched as written.
    """
    if text.encode("utf-8") in raw:
        return True
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    return text in _strings(value)


def _body_text(capture: CapturedRequest) -> str:
    """Every string of a request body, joined: what a model would read."""
    return _strings(capture.body)


def _strings(root: object) -> str:
    """Every string in a JSON value, in document order, one per line."""
    parts: list[str] = []
    stack: list[object] = [root]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return "\n".join(parts)
