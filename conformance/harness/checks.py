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
- ``anchor``: the first request of each instance logs its ``initial`` or
  ``resume`` snapshot (WRITER-1: the suite knows where instances start,
  the log does not);
- ``cache``: each request of an instance extends the previous one, as
  the fake's diagnostic saw it, unless the log records a header change or
  a surface replace between them (CACHE-1); a resumed instance whose
  header did not change extends the previous instance's last request
  (CACHE-3).

A harness that wrote no log fails (JSONL-1). A check the evidence cannot
support (a capture that matches no step, a log the checker could not read)
is an error or is left out, never a pass.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.check import (
    APPLIED_RULES,
    MUST,
    RECONSTRUCTION_RULES,
    SHOULD,
    check_lines,
    read_captures,
)
from conformance.harness.evidence import Evidence
from conformance.outcomes import Outcome
from conformance.rules import load_rules
from fakes import CapturedRequest, dump_capture_jsonl
from reference.errors import CodecError
from reference.json_values import JsonObject, json_equal
from reference.reconstruct import (
    HEADER_TYPES,
    RebuiltRequest,
    fold_through,
    rebuild_requests,
)
from reference.request import contract_view
from reference.revisions import Revision

READER_DUTIES = frozenset({"CHECK-2", "JSONL-3"})
"""Rules the checker applies that bind a reader of logs, not the harness
that wrote the log: they are not tallied for the harness."""

EXTENDS = ("append", "repeat")
"""Diagnostic relations under which a request extends its closest one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """The outcome of one check of one scenario run."""

    check_id: str
    """``scenario@revision/check``: stable across runs (``#2``, ``#3`` tell
    apart two expectations of one kind on one request)."""
    scenario: str
    revision: str
    rules: tuple[str, ...]
    level: str
    outcome: Outcome
    message: str = ""

    def dump(self) -> JsonObject:
        """The JSON form used in reports."""
        return {
            "id": self.check_id,
            "scenario": self.scenario,
            "revision": self.revision,
            "rules": list(self.rules),
            "level": self.level,
            "outcome": self.outcome.value,
            "message": self.message,
        }


def level_of(rules: Sequence[str]) -> str:
    """MUST when any of `rules` is a MUST rule, else SHOULD."""
    registry = load_rules()
    return MUST if any(registry[rule].is_must for rule in rules) else SHOULD


class _Judge:
    """Builds the results of one run, with ids that say what was checked."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.prefix = f"{evidence.scenario.id}@{evidence.revision.value}"
        self.results: list[CheckResult] = []

    def add(
        self,
        name: str,
        rules: Sequence[str],
        ok: bool | None,
        message: str = "",
        *,
        level: str | None = None,
    ) -> None:
        """Record a check; `ok` None is an error (no verdict).

        A failed check fails at its rules' level (`level_of`), or at
        `level` when given: a MUST rule the checker reports at SHOULD level
        (a member-order clause) only warns.
        """
        level = level or level_of(rules)
        check_id = f"{self.prefix}/{name}"
        taken = sum(
            1
            for result in self.results
            if result.check_id == check_id or result.check_id.startswith(check_id + "#")
        )
        if taken:  # two expectations of one kind on one request: keep ids unique
            check_id += f"#{taken + 1}"
        if ok is None:
            outcome = Outcome.ERROR
        elif ok:
            outcome = Outcome.PASS
        else:
            outcome = Outcome.FAIL if level == MUST else Outcome.WARN
        self.results.append(
            CheckResult(
                check_id=check_id,
                scenario=self.evidence.scenario.id,
                revision=self.evidence.revision.value,
                rules=tuple(rules),
                level=level,
                outcome=outcome,
                message=message,
            )
        )


def judge_leaks(evidence: Evidence) -> list[CheckResult]:
    """Only the ``absent`` checks: for what a run left before it broke."""
    judge = _Judge(evidence)
    _text_checks(judge, only="absent")
    return judge.results


def judge(evidence: Evidence) -> list[CheckResult]:
    """Every check of one scenario run, in a fixed order."""
    judge = _Judge(evidence)
    events = _events(evidence.log)
    _log_checks(judge)
    _send_checks(judge)
    _call_checks(judge)
    _text_checks(judge)
    log_failed = any(
        result.check_id.split("/", 2)[1] == "log" and result.outcome is not Outcome.PASS
        for result in judge.results
    )
    if events is None:
        if not log_failed:
            _cannot_judge_cache(judge, "the log's lines are not all JSON events")
    else:
        try:
            _cache_checks(judge, events)
        except (CodecError, KeyError, TypeError, ValueError, IndexError) as error:
            if not log_failed:  # the log checks say why; otherwise it is ours
                _cannot_judge_cache(judge, f"{type(error).__name__}: {error}")
    return judge.results


def _cannot_judge_cache(judge: _Judge, why: str) -> None:
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


def _log_checks(judge: _Judge) -> None:
    evidence = judge.evidence
    revision = evidence.revision
    if not evidence.log:
        judge.add(
            "log",
            ("JSONL-1",),
            False,
            f"the harness wrote no log at {evidence.log_path}",
        )
        return
    report = check_lines(
        io.BytesIO(evidence.log),
        path=str(evidence.log_path),
        revision=revision,
        captures=read_captures(_capture_lines(evidence.captures)),
    )
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
    if "CHECK-2" in first:
        # The checker itself failed on a line: nothing it says about this
        # log is a verdict on the harness (a bug of ours is no verdict).
        judge.add(
            "log",
            ("CHECK-2",),
            None,
            f"the checker could not check the log: {first['CHECK-2']}",
        )
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


def _events(log: bytes) -> list[JsonObject] | None:
    """The log's events, or None when any line is not a JSON event."""
    events: list[JsonObject] = []
    for number, line in enumerate(log.splitlines()):
        if number == 0 or not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            return None
        if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
            return None
        events.append(event)
    return events


# ---------------------------------------------------------------- sends


def _unscripted(message: str) -> str:
    return f"the scenario did not run as scripted, so it gives no verdict: {message}"


def _send_checks(judge: _Judge) -> None:
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


def _call_checks(judge: _Judge) -> None:
    calls = judge.evidence.calls
    for item in judge.evidence.scenario.expect:
        if item["check"] != "calls":
            continue
        key = (item["instance"], item["contributor"])
        found = calls.get(key, 0)
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


def _text_checks(judge: _Judge, only: str | None = None) -> None:
    evidence = judge.evidence
    log_lines = evidence.log.splitlines()
    bodies = [c.raw_body.decode("utf-8", "replace") for c in evidence.captures]
    for item in evidence.scenario.expect:
        if only is not None and item["check"] != only:
            continue
        if item["check"] == "absent":
            text = item["text"]
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
            _request_check(judge, item, bodies)


def _request_check(judge: _Judge, item: JsonObject, bodies: list[str]) -> None:
    """One ``request`` expectation: texts in (or not in) one captured request.

    The request is the `index`-th of the session's, or, with `send`, the
    `index`-th that send N (from 1) made, so requests a harness makes
    elsewhere do not shift it.
    """
    index = item["index"]
    position, limit = index, len(bodies)
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
        position, limit = send.captures_before + index, send.captures_after
    if position >= limit:
        judge.add(
            name,
            item["rules"],
            False,
            f"{where} was never sent: {len(bodies)} request(s) captured",
        )
        return
    capture = judge.evidence.captures[position]
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


# ---------------------------------------------------------------- the cache


def _matched_steps(
    events: list[JsonObject], captures: Sequence[CapturedRequest], revision: Revision
) -> list[int | None]:
    """For each capture, the position of its step among the log's rebuilds.

    Matches as the reconstruction check does (CHECK-1). When some capture
    matches no rebuild (the harness sent what its log does not say) but
    the log's certainly-sent steps are as many as the captures, they are
    paired in order: the log still says where headers changed, and the
    fake's diagnostic still says whether the prompt extended the last one.
    Otherwise a capture that matches nothing is None, and nothing is
    inferred from it.
    """
    rebuilt = rebuild_requests(events, revision)
    matched: list[int | None] = [None] * len(captures)
    position = 0
    for number, step in enumerate(rebuilt):
        if position >= len(captures):
            break
        body = captures[position].body
        same = isinstance(body, dict) and json_equal(
            step.contract_body(), contract_view(body), ordered=False
        )
        if same:
            matched[position] = number
            position += 1
        elif step.sent:
            position += 1
    if None in matched:
        sent = [number for number, step in enumerate(rebuilt) if step.sent]
        if len(sent) == len(captures):
            return list(sent)
    return matched


def _anchor_checks(
    judge: _Judge, events: list[JsonObject], rebuilt: list[RebuiltRequest]
) -> None:
    """The first request of every instance logs its anchoring snapshot (WRITER-1).

    The log cannot say where an instance starts; the driver noted how many
    events the log held when each instance started. The instance's first
    step that logged a header event or got a response (a step cancelled
    before it logged anything sent nothing) must have logged a
    ``request/header`` snapshot: ``initial`` when no header event came
    before it, ``resume`` otherwise, even when the header is unchanged.
    """
    starts = judge.evidence.instance_starts
    for position, (owner, first_seq) in enumerate(starts):
        end = starts[position + 1][1] if position + 1 < len(starts) else len(events)
        step = next(
            (
                step
                for step in rebuilt
                if first_seq <= step.boundary < end and step.evidence != "none"
            ),
            None,
        )
        if step is None:
            continue
        earlier = any(
            event["type"] in HEADER_TYPES for event in events[: step.boundary]
        )
        wanted = "resume" if earlier else "initial"
        event = events[step.header_seq] if step.header_seq is not None else None
        found = (
            event["data"].get("reason")
            if event is not None and event["type"] == "request/header"
            else None
        )
        judge.add(
            f"anchor/{owner}",
            ("WRITER-1",),
            found == wanted,
            ""
            if found == wanted
            else f"the first request of instance {owner} (turn {step.turn},"
            f" step {step.step}) logged "
            + (f"a snapshot with reason {found!r}" if found else "no snapshot")
            + f"; expected a {wanted!r} snapshot",
        )


def _cache_checks(judge: _Judge, events: list[JsonObject]) -> None:
    evidence = judge.evidence
    captures = evidence.captures
    owners = evidence.capture_instances
    revision = evidence.revision
    rebuilt = rebuild_requests(events, revision)
    matched = _matched_steps(events, captures, revision)
    _anchor_checks(judge, events, rebuilt)
    for later in range(1, len(captures)):
        earlier = later - 1
        first, second = matched[earlier], matched[later]
        if first is None or second is None:
            continue
        step, previous = rebuilt[second], rebuilt[first]
        same_instance = owners[earlier] == owners[later]
        why_not = _excuse(events, previous, step)
        if same_instance:
            if why_not is not None:
                continue
            rules: tuple[str, ...] = ("CACHE-1",)
        else:
            if not _resume_unchanged(events, step.header_seq, revision):
                continue
            rules = ("CACHE-3",)
        diagnostic = captures[later].diagnostic
        if diagnostic is None:
            continue
        ok = (
            diagnostic["relation"] in EXTENDS
            and diagnostic["closest_request"] == captures[earlier].index
        )
        judge.add(
            f"cache/request-{later}",
            rules,
            ok,
            "" if ok else _cache_message(earlier, later, diagnostic, same_instance),
        )


def _excuse(
    events: list[JsonObject], previous: RebuiltRequest, step: RebuiltRequest
) -> str | None:
    """What in the log explains a prompt that does not extend the previous one.

    A header event or a surface replace anywhere between the two steps'
    boundaries (a step aborted before its request left may have logged
    one), or the step's own header event; or, in ``request-messages``, a
    ``messageSuffix`` on the previous request, which the history then
    grows in front of.
    """
    if step.header_seq is not None:
        return f"a header event at seq {step.header_seq}"
    for event in events[previous.boundary : step.boundary]:
        if event["type"] in HEADER_TYPES:
            return f"a header event at seq {event['seq']}"
        if isinstance(event.get("surfaceOp"), dict):
            return f"a surface replace at seq {event['seq']}"
    if previous.header.get("messageSuffix"):
        return "the previous request's messageSuffix"
    return None


def _resume_unchanged(
    events: list[JsonObject], header_seq: int | None, revision: Revision
) -> bool:
    """Whether a new instance's snapshot equals the header in force before it."""
    if header_seq is None or header_seq == 0:
        return False
    snapshot = events[header_seq]
    if snapshot.get("type") != "request/header":
        return False
    if snapshot["data"].get("reason") != "resume":
        return False
    before = fold_through(events, header_seq - 1, revision)
    return before is not None and json_equal(before, snapshot["data"].get("header"))


def _cache_message(
    earlier: int, later: int, diagnostic: Any, same_instance: bool
) -> str:
    what = "the previous request" if same_instance else "the previous instance's last"
    text = (
        f"request {later} does not extend {what} (request {earlier}): the fake saw"
        f" {diagnostic['relation']}"
    )
    if diagnostic.get("closest_request") is not None:
        text += f" of its request {diagnostic['closest_request']}"
    divergence = diagnostic.get("divergence")
    if isinstance(divergence, dict):
        text += (
            f", first difference in {divergence.get('field')} at character"
            f" {divergence.get('char_offset')}: earlier {divergence.get('earlier')!r},"
            f" now {divergence.get('current')!r}"
        )
    cached = diagnostic.get("cached_tokens")
    return text + f" ({cached} of {diagnostic.get('prompt_tokens')} tokens cached)"
