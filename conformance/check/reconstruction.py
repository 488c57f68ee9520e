"""The reconstruction theorem: each captured request equals what the log rebuilds.

Implements the offline form of docs/spec.md REQ-1 .. REQ-6 and WIRE-1 ..
WIRE-5 (the check the anchor calls its THEOREM test), plus CHECK-1.

For each step that dispatched, the rule engine hands over the header in
force for it (the fold up to its own header event, or up to its first
response event) and the derived history strictly before its ``step/start``.
The expected body is `reqfold.reference.request.build_chat_body` of
`reqfold.reference.request.request_messages`; both it and the captured body are
compared in their `reqfold.reference.request.contract_view` (deployment settings
such as ``stream`` are not in the log). The first differing path is
reported, by value (MUST) and then by member order (WIRE-5, SHOULD).

Matching. Captured requests are consumed in order. A step with a header in
force and a response event (``assistant/chunk`` or ``assistant/message``)
certainly dispatched and takes the next captured request. A step without a
response may or may not have reached the provider: one that logged its
header and was then cancelled can have been aborted before or after its
body went out, and one with no header event cannot be told apart from one
that failed before sending (anchor-spec 4.8, 11.15). Such a step is matched
only when the next captured request equals what it would have sent; any
captured request left over at the end is reported (CHECK-1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from reqfold.conformance.check.capture_dialect import (
    body_dialect,
    compared_dialect,
    path_dialect,
)
from reqfold.conformance.check.findings import MISSING, SHOULD, Finding, finding
from reqfold.conformance.check.recording_json import parse_json
from reqfold.conformance.json_text.damage import line_damage
from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.request import (
    build_chat_body,
    contract_view,
    request_messages,
    wire_messages,
)
from reqfold.reference.revisions import Revision

ONE_SHOT_LOOKAHEAD = 4
"""How many captured requests a step's own request may follow and still be
matched to it, the ones between recognised as one-shot requests (CHECK-1,
SHOULD): a compaction summary or a title between two steps."""


class CaptureUnreadable(Exception):
    """A line of the capture file is not a captured request (exit status 2)."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedRequest:
    """One request as captured on the wire: its capture line, index and body."""

    line: int
    index: int
    body: Any
    usage: Any = None
    """The usage the provider answered with, when the capture holds it."""


def cache_cost(usage: Any) -> str | None:
    """How much of a request's prompt the provider served from its cache, as
    ``"512 of 2,597 prompt tokens"``, from its usage (OpenAI and DeepSeek
    ``prompt_tokens`` with ``prompt_tokens_details.cached_tokens`` or
    ``prompt_cache_hit_tokens``; Anthropic ``input_tokens`` plus the cache
    read and write counts); None when the usage does not say."""
    if not isinstance(usage, dict):
        return None

    def count(value: Any) -> int | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return value if ok else None

    details = usage.get("prompt_tokens_details")
    prompt = count(usage.get("prompt_tokens"))
    cached = count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is None:
        cached = count(usage.get("prompt_cache_hit_tokens"))
    if prompt is None:  # Anthropic: input_tokens leaves the cached part out
        read = count(usage.get("cache_read_input_tokens"))
        rest = count(usage.get("input_tokens"))
        written = count(usage.get("cache_creation_input_tokens")) or 0
        if read is None or rest is None:
            return None
        prompt, cached = rest + read + written, read
    if cached is None or cached > prompt:
        return None
    return f"{cached:,} of {prompt:,} prompt tokens"


REFUSED_AS_TOO_LARGE = 413
"""The fake's status for a body over its limit, captured unparsed (``body``
null): such a request was never read whole, so it is not compared."""


def refused_unread(status: object, body: object) -> bool:
    """Whether a captured request was refused as too large before it was read
    whole (a scripted 413 fault comes after the body was read and parsed)."""
    return status == REFUSED_AS_TOO_LARGE and body is None


def read_captures(
    lines: Iterable[bytes],
    torn: list[int] | None = None,
    uncompared: Counter[str] | None = None,
) -> Iterator[CapturedRequest]:
    """Captured chat-completions requests, in file order.

    A line is ``{"index": n, "body": {...}, "path"?: ...}`` (the fake
    provider's capture format; lines whose ``path`` is no request path,
    and requests refused unread as too large, are skipped) or a bare
    request body (an object with ``messages``, ``model`` or ``input``).
    A request in another dialect (Anthropic Messages, Responses: by its
    path, else its body's shape, `capture_dialect`) is skipped and counted
    by dialect in `uncompared`. Blank lines are skipped, and so is a torn
    last line (no newline, not JSON: the trace of a writer stopped
    mid-line, as a log's torn tail is), whose number goes to `torn`.
    Raises `CaptureUnreadable` for anything else.
    """
    position = 0
    chat = compared_dialect()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = parse_json(raw.decode("utf-8")).value
        except (UnicodeDecodeError, ValueError) as error:  # JsonDamaged is one
            if not raw.endswith(b"\n"):  # the last line, cut short
                if torn is not None:
                    torn.append(number)
                return
            why = line_damage(raw) or str(error)  # the shared words
            raise CaptureUnreadable(f"not JSON ({why})", line=number) from None
        if not isinstance(value, dict):
            raise CaptureUnreadable("not a JSON object", line=number)
        if "body" in value:
            path = value.get("path")
            index = value.get("index")
            body = value["body"]
            if isinstance(path, str):
                dialect = path_dialect(path)
            else:
                dialect = body_dialect(body) if isinstance(body, dict) else chat
            if dialect is None:
                continue
            if dialect == chat and refused_unread(value.get("status"), body):
                continue  # the fake never read it whole: nothing to compare
        elif "messages" in value or "model" in value or "input" in value:
            index, body = None, value
            dialect = body_dialect(value)
        else:
            raise CaptureUnreadable(
                'neither a capture line ({"body": ...}) nor a request body'
                ' (no "messages", "model" or "input")',
                line=number,
            )
        if dialect != chat:
            if uncompared is not None:
                uncompared[dialect] += 1
            continue
        yield CapturedRequest(
            line=number,
            index=index if isinstance(index, int) else position,
            body=body,
            usage=value.get("usage") if "body" in value else None,
        )
        position += 1


@dataclass(frozen=True, slots=True, kw_only=True)
class StepPoint:
    """Where a step sits in the log: its turn, step, and its step/start."""

    turn: int
    step: int
    line: int
    seq: int


@dataclass(frozen=True, slots=True)
class Difference:
    """The first place two JSON values differ."""

    path: str
    expected: Any
    found: Any
    order_only: bool = False


ABSENT = MISSING


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return False
    return type(a) is type(b) and a == b


def first_difference(expected: Any, found: Any, path: str = "") -> Difference | None:
    """The first path, in document order, where two JSON values differ.

    Values are compared as JSON-2 says (``true`` is not ``1``, ``1`` equals
    ``1.0``); when they are equal by value, member order is compared
    (JSON-3) and a difference there has `Difference.order_only` set.
    Iterative, so depth is bounded by memory.
    """
    stack: list[tuple[str, Any, Any]] = [(path, expected, found)]
    order: Difference | None = None
    while stack:
        where, a, b = stack.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            if order is None and [k for k in a if k in b] != [k for k in b if k in a]:
                order = Difference(where or "$", list(a), list(b), order_only=True)
            children = [
                (f"{where}.{k}" if where else k, a.get(k, ABSENT), b.get(k, ABSENT))
                for k in [*a, *(k for k in b if k not in a)]
            ]
            stack.extend(reversed(children))
        elif isinstance(a, list) and isinstance(b, list):
            children = [
                (
                    f"{where}[{i}]",
                    a[i] if i < len(a) else ABSENT,
                    b[i] if i < len(b) else ABSENT,
                )
                for i in range(max(len(a), len(b)))
            ]
            stack.extend(reversed(children))
        elif a is ABSENT or b is ABSENT or not _same_scalar(a, b):
            return Difference(where or "$", a, b)
    return order


def _rebuilds(capture: CapturedRequest, expected: JsonObject) -> bool:
    """Whether `capture` is the request whose contract view is `expected`
    (member order aside: that is WIRE-5's SHOULD, reported on its own)."""
    if not isinstance(capture.body, dict):
        return False
    difference = first_difference(expected, contract_view(capture.body))
    return difference is None or difference.order_only


def expected_view(
    header: Header, derived: list[JsonObject], revision: Revision
) -> JsonObject:
    """The contract members of the body the log rebuilds for one step."""
    messages = request_messages(header, derived, revision)
    return contract_view(build_chat_body(header, messages))


class Reconstruction:
    """Matches dispatched steps to captured requests and compares them.

    Args:
        captures: the captured requests, in arrival order (read lazily).
        revision: the revision the log is read under.
        uncompared: the requests in other dialects `captures` leaves out, by
            dialect (`read_captures` counts them as it reads). When the
            capture held nothing else, nothing was compared: a step finding
            no request is then no CHECK-1 finding.
    """

    def __init__(
        self,
        captures: Iterator[CapturedRequest],
        revision: Revision,
        uncompared: Counter[str] | None = None,
    ) -> None:
        self._captures = captures
        self._ahead: list[CapturedRequest] = []
        """Captures read but not yet taken, in order (`_peek`, `_look`)."""
        self._exhausted = False
        self.revision = revision
        self.matched = 0
        self.steps = 0
        self.taken = 0
        """Chat-completions requests read from the capture so far."""
        self.uncompared: Counter[str] = Counter() if uncompared is None else uncompared
        self.one_shot_indices: list[int] = []
        """Indexes of the captured requests recognised as no step of the log
        (`ONE_SHOT_LOOKAHEAD`)."""
        self.last_capture: CapturedRequest | None = None
        """The capture the last dispatched step took (None when it took none)."""

    def _take(self) -> None:
        """Consume the next capture (`_peek` saw it)."""
        if self._ahead:
            self._ahead.pop(0)

    def _look(self, position: int) -> CapturedRequest | None:
        """The capture `position` places after the next one (0: the next)."""
        while len(self._ahead) <= position and not self._exhausted:
            capture = next(self._captures, None)
            if capture is None:
                self._exhausted = True
            else:
                self._ahead.append(capture)
                self.taken += 1
        return self._ahead[position] if position < len(self._ahead) else None

    def _peek(self) -> CapturedRequest | None:
        return self._look(0)

    def _one_shots_before(self, expected: JsonObject) -> int:
        """How many captures before the next one that is `expected`'s rebuild,
        within `ONE_SHOT_LOOKAHEAD`; 0 when the next is, or none is."""
        for position in range(1, ONE_SHOT_LOOKAHEAD + 1):
            capture = self._look(position)
            if capture is None:
                return 0
            if _rebuilds(capture, expected):
                return position
        return 0

    @property
    def compared_none(self) -> bool:
        """Whether the capture, read to its end, held requests in other
        dialects only: the log was compared with nothing."""
        return self._exhausted and self.taken == 0 and bool(self.uncompared)

    def dispatch(
        self,
        point: StepPoint,
        header: Header,
        derived: list[JsonObject],
        *,
        certain: bool,
    ) -> list[Finding]:
        """Compare the next captured request with what `point`'s step sent."""
        capture = self._peek()
        expected = expected_view(header, derived, self.revision)
        if not certain:
            if capture is not None and isinstance(capture.body, dict):
                difference = first_difference(expected, contract_view(capture.body))
                if difference is None or difference.order_only:
                    self._take()
                    self.last_capture = capture
                    self.steps += 1
                    self.matched += 1
            return []
        self.steps += 1
        where = f"turn {point.turn} step {point.step}"
        if capture is None:
            if self.compared_none:
                return []  # a capture in another dialect: nothing to compare
            return [
                finding(
                    "CHECK-1",
                    point.line,
                    point.seq,
                    f"{where} dispatched a request, but the capture holds no more",
                )
            ]
        one_shots: list[Finding] = []
        if not _rebuilds(capture, expected):
            for _ in range(self._one_shots_before(expected)):
                one_shots.append(self._one_shot(capture, point))
                self._take()
                capture = self._peek()
                assert capture is not None  # `_one_shots_before` saw it
        self._take()
        self.matched += 1
        self.last_capture = capture
        return one_shots + self._compare(capture, point, header, expected, where)

    def _one_shot(self, capture: CapturedRequest, point: StepPoint) -> Finding:
        """A captured request that is no step of the log, between steps whose
        requests rebuild (a compaction summary, a title sent with the
        session's own key): a SHOULD finding of CHECK-1, not a failure."""
        self.one_shot_indices.append(capture.index)
        return finding(
            "CHECK-1",
            point.line,
            point.seq,
            f"request {capture.index} (capture line {capture.line}) is no step of"
            " the log: a one-shot request (a compaction summary, a title) sent"
            " with the session's own key, before the request of turn"
            f" {point.turn} step {point.step}; send such requests with a key of"
            " their own",
            level=SHOULD,
        )

    def _compare(
        self,
        capture: CapturedRequest,
        point: StepPoint,
        header: Header,
        expected: JsonObject,
        where: str,
    ) -> list[Finding]:
        """The findings of one step's request against its rebuild."""
        label = f"request {capture.index} (capture line {capture.line})"
        if not isinstance(capture.body, dict):
            return [
                finding(
                    "WIRE-1",
                    point.line,
                    point.seq,
                    f"{label} for {where} is not a JSON object body",
                    found=capture.body,
                )
            ]
        difference = first_difference(expected, contract_view(capture.body))
        if difference is None:
            return []
        rule = self._rule_for(difference.path, header)
        if difference.order_only:
            return [
                finding(
                    "WIRE-5",
                    point.line,
                    point.seq,
                    f"{label} for {where} equals the rebuilt body by value, but"
                    f" members of {difference.path} are in another order",
                    expected=difference.expected,
                    found=difference.found,
                    level=SHOULD,
                )
            ]
        return [
            finding(
                rule,
                point.line,
                point.seq,
                f"{label} differs from what the log rebuilds for {where}"
                f" at {difference.path}",
                expected=difference.expected,
                found=difference.found,
                path=difference.path,
            )
        ]

    def skip(self, point: StepPoint) -> None:
        """Consume the capture of a step that certainly dispatched a request
        the log cannot rebuild (its header or history is unknown), unchecked.

        Without it every later step would be compared with its neighbour's
        capture. A missing capture is not reported: nothing is compared.
        """
        del point
        self.steps += 1
        self.last_capture = self._peek()
        if self.last_capture is not None:
            self._take()

    def _rule_for(self, path: str, header: Header) -> str:
        """The rule a difference at `path` shows broken (by body member)."""
        member = path.split(".")[0].split("[")[0]
        if member == "model":
            return "WIRE-1"
        if member == "tools":
            return "WIRE-3"
        if member in ("temperature", "max_tokens", "stop"):
            return "WIRE-4"
        if member != "messages" or not path.startswith("messages["):
            return "REQ-6"
        index = int(path[len("messages[") :].split("]")[0])
        system = 1 if "system" in header else 0
        prefix = sum(
            len(wire_messages(message)) for message in header.get("messagePrefix", [])
        )
        if index < system:
            return "WIRE-1"
        if index < system + prefix and self.revision is not Revision.HEADER_EVENTS:
            return "REQ-4" if self.revision is Revision.REQUEST_MESSAGES else "REQ-5"
        return "REQ-1"

    def finish(self, line: int) -> list[Finding]:
        """Report captured requests no dispatched step accounts for (CHECK-1)."""
        left = []
        while (capture := self._peek()) is not None:
            left.append(capture)
            self._take()
        if not left:
            return []
        first = left[0]
        return [
            finding(
                "CHECK-1",
                line,
                None,
                f"{len(left)} captured request(s) match no dispatched step of the"
                f" log (first: request {first.index}, capture line {first.line})",
                expected=self.steps,
                found=self.steps + len(left),
            )
        ]
