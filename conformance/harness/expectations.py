"""The kinds of expectation a scenario declares, as a table.

A scenario says what to expect in two places (docs/scenarios.md): items of
its top-level ``expect`` (``calls``, ``absent``, ``request``) and members
of a send step's ``expect`` (``end``, ``requests``, ``steps``). Each kind
is one row of `KINDS`, holding side by side:

* its *check* (`KindCheck`): judges the evidence against one declared
  expectation and says each result (`Judged`, the step before a `Check`):
  its outcome (pass, fail or error: no verdict), and why;
* its *reproduction*: what a check of the kind that did not pass shows in
  a report (`Facts`: the step, what was expected, what was found and
  where they first differ), recorded on the `Check` when it is made.

A new kind is one row plus its two functions (and its place in
scenario.schema.json); tests/conformance/test_expectation_kinds.py fails
when a kind that the schema allows or a scenario uses has no row. The
judge (`reqfold.conformance.harness.checks`) runs every row: send kinds
for each send that declares them, scenario kinds a `Kind.round` at a time.
A run that broke before its end runs them too, with `Declared.partial`
set: a kind's check alone decides what part of a run proves.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.log_file import lines_holding
from reqfold.conformance.harness.results import COMPARED, Facts, Judge, passed
from reqfold.conformance.outcomes import Outcome
from reqfold.fakes import CapturedRequest
from reqfold.reference.json_values import JsonObject, JsonValue

SCENARIO = "scenario"
"""A kind declared as an item of the scenario's top-level ``expect``."""
SEND = "send"
"""A kind declared as a member of a send step's ``expect``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedTurn:
    """The turn a send opened, as the log records it (for ``steps``)."""

    turn: JsonValue
    opened: int
    """How many steps the turn opened in the log."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Declared:
    """One expectation as a scenario declares it, with where it applies."""

    item: JsonObject
    """The top-level ``expect`` item, or the send step's ``expect`` object."""
    send: int | None = None
    """The send (from 1) a send's expectation belongs to."""
    partial: bool = False
    """The run broke before its end: judge only what part of a run proves."""
    logged: LoggedTurn | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """What a kind's check says of one expectation: the step before a
    `Check`, which `judge_expectation` alone makes of it (giving its id,
    its level and, when it did not pass, the kind's reproduction)."""

    name: str
    rules: tuple[str, ...]
    outcome: Outcome
    """`passed`, or ``error`` (no verdict); `Judge.add` lowers a ``fail``
    of SHOULD rules to ``warn``."""
    message: str = ""
    seen: JsonValue = None
    """What the check saw, for the kind's reproduction."""


KindCheck = Callable[[Judge, Declared], Iterator[Judged]]
"""A kind's check: what it says of one declared expectation."""
Reproduce = Callable[[Judge, Declared, Judged], Facts]
"""A kind's reproduction of a check that did not pass."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Kind:
    """One kind of expectation: its check and its reproduction side by side."""

    name: str
    where: str
    """`SCENARIO` or `SEND`."""
    check: KindCheck
    reproduce: Reproduce
    round: int = 0
    """`SCENARIO` kinds are judged a round at a time, lowest first, each
    round in the order the scenario lists its items (so check ids keep
    their order); `SEND` kinds ignore it."""


def judge_expectation(judge: Judge, kind: Kind, declared: Declared) -> None:
    """Run one declared expectation's check and record each result, with
    its reproduction when it did not pass."""
    for judged in kind.check(judge, declared):
        failed = judged.outcome is not Outcome.PASS
        judge.add(
            judged.name,
            judged.rules,
            judged.outcome,
            judged.message,
            facts=kind.reproduce(judge, declared, judged) if failed else Facts(),
            detail={"expectation": kind.name},
        )


def unscripted(message: str) -> str:
    """A mismatch that shows the scenario did not run as scripted: no verdict."""
    return f"the scenario did not run as scripted, so it gives no verdict: {message}"


# ---------------------------------------------------------------- sends


def _send_rules(judge: Judge, declared: Declared) -> tuple[str, ...]:
    return tuple(declared.item.get("rules", ()))


def _send_judged(
    judge: Judge, declared: Declared, what: str, ok: bool, message: str, seen: JsonValue
) -> Iterator[Judged]:
    """A send's expectation: at its rules when it names them, else a
    mismatch is no verdict (the scenario did not run as scripted)."""
    rules = _send_rules(judge, declared)
    name = f"send-{declared.send}/{what}"
    if rules:
        yield Judged(
            name=name,
            rules=rules,
            outcome=passed(ok),
            message="" if ok else message,
            seen=seen,
        )
    elif not ok:
        yield Judged(
            name=name,
            rules=judge.evidence.scenario.rules,
            outcome=Outcome.ERROR,
            message=unscripted(message),
            seen=seen,
        )


def _reproduce_send(what: str) -> Reproduce:
    """The reproduction of the send expectation `what` (``end``, ...): what
    the send's `expect` said against what was seen, at the send's step."""

    def reproduce(judge: Judge, declared: Declared, judged: Judged) -> Facts:
        return Facts(
            step=judge.send_step(declared.send or 0),
            expected={what: declared.item[what]},
            found={what: judged.seen},
            difference=COMPARED,
        )

    return reproduce


def _check_end(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """``end``: how the send's turn ended (``turn/ended``'s reason kind)."""
    send = judge.evidence.sends[(declared.send or 0) - 1]
    wanted = declared.item["end"]
    found = send.reason.get("kind")
    message = f"turn {send.turn} of {send.instance} ({send.prompt!r}) ended" + (
        f" {found!r}, expected {wanted!r}"
        + (f": {send.reason.get('message')}" if "message" in send.reason else "")
    )
    yield from _send_judged(judge, declared, "end", found == wanted, message, found)


def _check_requests(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """``requests``: how many requests the send's turn sent."""
    send = judge.evidence.sends[(declared.send or 0) - 1]
    sent = send.captures_after - send.captures_before
    message = (
        f"turn {send.turn} of {send.instance} sent {sent} request(s),"
        f" expected {declared.item['requests']}"
    )
    ok = sent == declared.item["requests"]
    yield from _send_judged(judge, declared, "requests", ok, message, sent)


def _check_steps(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """``steps``: how many steps the send's turn opened in the log (judged
    only where the log records the turn: `Declared.logged`)."""
    logged = declared.logged
    if logged is None:
        return
    send = judge.evidence.sends[(declared.send or 0) - 1]
    expected = declared.item["steps"]
    ok = logged.opened == expected
    yield Judged(
        name=f"send-{declared.send}/steps",
        rules=_send_rules(judge, declared) or judge.evidence.scenario.rules,
        outcome=passed(ok),
        message=""
        if ok
        else f"turn {logged.turn} of {send.instance} ({send.prompt!r})"
        f" opened {logged.opened} step(s) in the log, expected {expected}",
        seen=logged.opened,
    )


# ---------------------------------------------------------------- the scenario


def _check_calls(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """``calls``: a contributor's calls by one instance; with
    `Declared.partial`, only a count already exceeded (a count only grows)."""
    item = declared.item
    found = judge.evidence.calls.get((item["instance"], item["contributor"]), 0)
    if declared.partial and found <= item["count"]:
        return
    ok = found == item["count"]
    yield Judged(
        name=f"calls/{item['contributor']}@{item['instance']}",
        rules=tuple(item["rules"]),
        outcome=passed(ok),
        message=""
        if ok
        else f"contributor {item['contributor']!r} was called {found} time(s)"
        f" by instance {item['instance']}, expected {item['count']}"
        + (f": {item['why']}" if "why" in item else ""),
        seen=found,
    )


def _reproduce_calls(judge: Judge, declared: Declared, judged: Judged) -> Facts:
    return Facts(
        expected={"calls": declared.item.get("count")},
        found={"calls": judged.seen},
        difference=COMPARED,
    )


def _check_absent(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """``absent``: a sentinel text is nowhere in the log or any request."""
    evidence = judge.evidence
    text = str(declared.item["text"])
    if evidence.log_left_on_disk:
        lines = _log_lines_holding(evidence, text)
    else:
        lines = [
            number
            for number, line in enumerate(evidence.log.splitlines(), start=1)
            if _holds(line, text)
        ][:1]
    places = [f"the log (line {number})" for number in lines]
    places += [
        f"request {position}"
        for position, capture in enumerate(evidence.captures)
        if _holds(capture.raw_body, text) or text in body_text(capture)
    ]
    yield Judged(
        name=f"absent/{text}",
        rules=tuple(declared.item["rules"]),
        outcome=passed(not places),
        message=f"{text!r} was found in {', '.join(places)}" if places else "",
        seen=list(places),
    )


def _reproduce_absent(judge: Judge, declared: Declared, judged: Judged) -> Facts:
    """The whole run is kept: the places it was found in say where."""
    return Facts(
        expected={"absent": declared.item["text"]},
        found={"foundIn": judged.seen},
    )


def _check_request(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """``request``: texts in (or not in) one captured request, the
    `index`-th of the session's or, with `send`, of that send's (from 1),
    so requests a harness makes elsewhere do not shift it. One-shot
    requests (a summary sent with the session's key) are no step."""
    if declared.partial:
        return
    item = declared.item
    index = item["index"]
    assert isinstance(index, int)
    rules = tuple(item["rules"])
    evidence = judge.evidence
    captured = len(evidence.captures)
    first, limit = 0, captured
    name = f"request-{index}"
    where = f"request {index}"
    if "send" in item:
        name = f"send-{item['send']}/request-{index}"
        where = f"request {index} of send {item['send']}"
        if item["send"] > len(evidence.sends):
            yield Judged(
                name=name,
                rules=rules,
                outcome=Outcome.ERROR,
                message=f"there is no send {item['send']}",
            )
            return
        send = evidence.sends[item["send"] - 1]
        first, limit = send.captures_before, send.captures_after
    steps = [
        position
        for position in range(first, limit)
        if evidence.captures[position].index not in judge.one_shots
    ]
    if index >= len(steps):
        yield Judged(
            name=name,
            rules=rules,
            outcome=Outcome.FAIL,
            message=f"{where} was never sent: {captured} request(s) captured",
        )
        return
    position = steps[index]
    capture = evidence.captures[position]
    body = body_text(capture)
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
    yield Judged(
        name=name,
        rules=rules,
        outcome=passed(not problems),
        message=f"{where}: " + "; ".join(problems) if problems else "",
        seen=position,
    )


def _reproduce_request(judge: Judge, declared: Declared, judged: Judged) -> Facts:
    """The request's messages (what the check read), at the step of the
    send it left in; a request never sent shows none."""
    item = declared.item
    expected = {key: item[key] for key in ("contains", "lacks", "opens") if key in item}
    position = judged.seen
    if "send" in item and isinstance(item["send"], int):
        step = judge.send_step(item["send"])
    elif isinstance(position, int):
        step = judge.step_of_request(position)
    else:
        step = None
    if not isinstance(position, int):
        return Facts(step=step, expected=expected)
    body = judge.evidence.captures[position].body
    messages = body.get("messages") if isinstance(body, dict) else None
    return Facts(
        step=step, expected=expected, found={"request": position, "messages": messages}
    )


KINDS: Mapping[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            name="end", where=SEND, check=_check_end, reproduce=_reproduce_send("end")
        ),
        Kind(
            name="requests",
            where=SEND,
            check=_check_requests,
            reproduce=_reproduce_send("requests"),
        ),
        Kind(
            name="steps",
            where=SEND,
            check=_check_steps,
            reproduce=_reproduce_send("steps"),
        ),
        Kind(
            name="calls", where=SCENARIO, check=_check_calls, reproduce=_reproduce_calls
        ),
        Kind(
            name="absent",
            where=SCENARIO,
            check=_check_absent,
            reproduce=_reproduce_absent,
            round=1,
        ),
        Kind(
            name="request",
            where=SCENARIO,
            check=_check_request,
            reproduce=_reproduce_request,
            round=1,
        ),
    )
}
"""Every kind of expectation, by the name a scenario writes (module docstring)."""

SEND_MEMBERS_NOT_KINDS = frozenset({"rules"})
"""Members of a send's ``expect`` that are no kind: the rules its kinds cite."""


# ---------------------------------------------------------------- text search


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
    JSON-escaped (``\\u00e9``, ``\\"``), searched a chunk at a time."""
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


def body_text(capture: CapturedRequest) -> str:
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
