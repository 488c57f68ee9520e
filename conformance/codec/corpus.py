"""The language-neutral codec test vectors: layout, loading, judging.

The vectors live in ``conformance/vectors/<revision>/<family>.json`` (see
docs/vectors.md): one file per codec method and per revision that
*introduced* the behaviour its cases pin down, each case giving the
method's params and either the exact result or a rejection. This module
lists the files, loads and checks them, yields ``(revision, case)`` pairs
to run, and judges an implementation's JSON-RPC response against a case.
It needs nothing beyond the standard library; the JSON Schema of the file
format (``vectors.schema.json``) is checked by the test suite.

Positive and negative cases. The coverage lint (tests/conformance) wants
every codec rule shown both ways, so the two words are defined here,
exactly:

* A case is **positive** when it expects a result: the implementation must
  accept the input and answer with this value.
* A case is **negative** when it shows what must *not* happen: it expects
  a rejection (any JSON-RPC error with code -32000), or a result that is
  the method's "no" answer: ``codec/equals`` -> ``{"equal": false}``,
  ``codec/diff`` -> ``{"delta": null}``, ``codec/fold`` -> ``{"header":
  null}``, ``codec/record`` -> ``{"event": null}``.

A "no" answer is both positive and negative; a rule is covered both ways
when it has a positive case and a negative case that are not the same
single case.

Judging. Results are compared as JSON values (JSON-2: ``true`` is not
``1``, ``1`` equals ``1.0``; an integer beyond 2^53 equals any number with
the same nearest double, JSON-5) *and* by object member order (JSON-3), giving
a `Verdict`: `Verdict.PASS` when both agree, `Verdict.WARN` when only the
member order differs (a SHOULD finding), `Verdict.FAIL` otherwise. On a
``SHOULD`` case a failure is reported as a warning. A rejection case
is judged by `judge_rejection`: the rejection itself (any JSON-RPC error
response with code -32000) is the MUST; the rule the error names
(``error.data.rule``) and the seq of the faulty event (``error.data.seq``)
are the diagnosis the adapter protocol promises, so a missing or other
one is a warning (a SHOULD finding), except a seq other than the delta's
on a ``FOLD-2`` case, whose rule itself says the error names that seq: a
failure. The expected ``kind`` is informative: when the response's
``error.data.kind`` differs, the verdict says so in its `Judgement.note`.
Judging never raises on what an implementation answered, whatever its
values.
"""

from __future__ import annotations

import copy
import enum
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.rules import Rule
from reference.json_values import JsonObject, JsonValue, parse_json
from reference.revisions import Revision

VECTORS_DIR: Final = Path(__file__).resolve().parent.parent / "vectors"
"""Where the vector files live, beside this module."""

SCHEMA_PATH: Final = VECTORS_DIR / "vectors.schema.json"
"""The JSON Schema (draft 2020-12) of one vector file."""

SCHEMA_REF: Final = "../vectors.schema.json"
"""The ``$schema`` member every vector file carries."""

FAMILIES: Final[Mapping[str, str]] = {
    "canonical": "codec/canonical",
    "equals": "codec/equals",
    "diff": "codec/diff",
    "apply": "codec/apply",
    "fold": "codec/fold",
    "record": "codec/record",
}
"""Each family (file name) and the adapter method its cases call."""

LEVELS: Final = ("MUST", "SHOULD")

CORE, STRICT = "core", "strict"
PROFILES: Final = (CORE, STRICT)
"""The profiles a case belongs to (docs/vectors.md, "Profiles"): ``core``,
behaviour on what a conforming writer produces, which every implementation
is judged on; ``strict``, rejecting malformed, conflicting or non-JSON
input and reading non-canonical input to ``equals``/``diff``/``apply``/
``fold``, judged when an implementation claims it (the ``strict``
capability of ``initialize``) or when asked to (``--profile strict``)."""

ERROR_KINDS: Final = (
    "malformed-header",
    "malformed-delta",
    "delta-conflict",
    "delta-before-snapshot",
    "malformed-event",
    "not-json-value",
)
"""The informative rejection kinds (``CodecError.kind`` of the reference)."""

REJECTED: Final = -32000
"""The JSON-RPC error code of a rejection the spec requires."""

SEQ_NAMING_RULES: Final = frozenset({"FOLD-2"})
"""Rules whose own text requires the error to name an event's seq: on a
case that demonstrates one, naming another seq breaks the rule (a
failure), where elsewhere a wrong or missing seq is a SHOULD finding."""

CODEC_RULE_PREFIXES: Final = (
    "HDR-",
    "CONFIG-",
    "SYS-",
    "TOOLS-",
    "MSGS-",
    "EQ-",
    "DELTA-",
    "FOLD-",
    "SNAP-",
)
CODEC_RULE_IDS: Final = frozenset(
    {"JSON-1", "JSON-2", "JSON-3", "JSON-5", "HDR-5"}
    | {"WRITER-1", "WRITER-2", "WRITER-3", "WRITER-4", "WRITER-5"}
)
"""Codec rules named one by one: JSON-1..3, the SHOULD rule HDR-5, and the
writer's decision (WRITER-6 is about a whole log, not one decision)."""

_NO_ANSWERS: Final[Mapping[str, JsonObject]] = {
    "codec/equals": {"equal": False},
    "codec/diff": {"delta": None},
    "codec/fold": {"header": None},
    "codec/record": {"event": None},
}


class VectorError(Exception):
    """A vector file breaks the format of docs/vectors.md."""

    def __init__(self, path: Path, message: str, *, case_id: str | None = None):
        self.path = path
        self.case_id = case_id
        where = f"{path}" if case_id is None else f"{path} [{case_id}]"
        super().__init__(f"{where}: {message}")


class Verdict(enum.Enum):
    """The outcome of comparing one response with one case."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Judgement:
    """A verdict and, unless it is a pass, what differed.

    `note` is informative and never changes the verdict: a rejection that
    passes with another ``kind`` than the vector's says so there.
    """

    verdict: Verdict
    reason: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorCase:
    """One test vector, as written in its file."""

    id: str
    family: str
    method: str
    rules: tuple[str, ...]
    level: str
    profile: str
    revisions: tuple[Revision, ...]
    description: str
    params: JsonObject
    expect: JsonObject
    path: Path

    @property
    def expects_error(self) -> bool:
        """True for a rejection case."""
        return "error" in self.expect

    @property
    def expected_result(self) -> JsonObject:
        """The exact result a positive case expects."""
        if self.expects_error:
            raise ValueError(f"vector {self.id} expects a rejection, not a result")
        result: JsonObject = self.expect["result"]
        return result

    @property
    def expected_error(self) -> JsonObject | None:
        """``{"kind", "rule", "seq"?}`` for a rejection case, else None."""
        error: JsonObject | None = self.expect.get("error")
        return error

    @property
    def expected_rules(self) -> tuple[str, ...]:
        """The rules a rejection may name, any one of them (``expect.error.rule``
        as a tuple); empty for a case that expects a result."""
        error = self.expected_error
        if error is None:
            return ()
        rule = error["rule"]
        return (rule,) if isinstance(rule, str) else tuple(rule)

    @property
    def is_positive(self) -> bool:
        """The case expects a result (module docstring)."""
        return not self.expects_error

    @property
    def is_negative(self) -> bool:
        """The case expects a rejection or a "no" answer (module docstring)."""
        if self.expects_error:
            return True
        no = _NO_ANSWERS.get(self.method)
        return no is not None and values_equal(self.expected_result, no)

    def request_params(self, revision: Revision) -> JsonObject:
        """The params to send when running the case under `revision`."""
        if revision not in self.revisions:
            raise ValueError(f"vector {self.id} does not apply to {revision.value}")
        params: JsonObject = copy.deepcopy(self.params)
        params["revision"] = revision.value
        return params


# ---------------------------------------------------------------- JSON


def load_json(text: str) -> JsonValue:
    """Parse JSON text strictly: no repeated keys, no NaN/Infinity tokens.

    A number too large for a double (``1e400``) is valid JSON text and
    becomes ``float("inf")``; the vectors use it to test JSON-1.
    """
    return parse_json(text)


def encode_json(value: JsonValue) -> str:
    """Compact JSON text of `value`, members in insertion order.

    Unlike `json.dumps`, an infinite float is written as the number
    ``1e400`` (or ``-1e400``), the way the vector files spell it, and a
    lone surrogate as its escape (``"\\ud800"``), so the text stays JSON
    and UTF-8; NaN raises ValueError.
    """
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            parts.append(item.text)
        elif isinstance(item, dict):
            stack.append(_Token("}"))
            members = list(item.items())
            for index in range(len(members) - 1, -1, -1):
                key, child = members[index]
                stack.append(child)
                prefix = "," if index else ""
                stack.append(_Token(prefix + _string(key) + ":"))
            stack.append(_Token("{"))
        elif isinstance(item, list):
            stack.append(_Token("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Token(","))
            stack.append(_Token("["))
        elif isinstance(item, float) and not math.isfinite(item):
            if math.isnan(item):
                raise ValueError("NaN cannot be written as JSON")
            parts.append("1e400" if item > 0 else "-1e400")
        elif isinstance(item, str):
            parts.append(_string(item))
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "".join(parts)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(text: str) -> str:
    """A JSON string literal; a lone surrogate (JSON-1 vectors hold some) is
    written as its ``\\uXXXX`` escape, so the text is still UTF-8."""
    literal = json.dumps(text, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", literal)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str


def values_equal(a: JsonValue, b: JsonValue, *, ordered: bool = False) -> bool:
    """Compare JSON values (JSON-2); with ``ordered``, member order too (JSON-3)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or _same_double(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            values_equal(x, y, ordered=ordered) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        if (list(a) != list(b)) if ordered else (a.keys() != b.keys()):
            return False
        return all(values_equal(a[key], b[key], ordered=ordered) for key in a)
    return False


DOUBLE_EXACT: Final = 2**53
"""Beyond this magnitude not every integer is a double (JSON-5)."""


def _same_double(a: int | float, b: int | float) -> bool:
    """An integer beyond 2^53 matches a number with the same nearest double.

    JSON-5: an implementation may hold every number as a double, so such an
    integer need only come back as its nearest double (JavaScript writes
    9007199254740993 back as 9007199254740992).
    """
    if not any(isinstance(x, int) and abs(x) > DOUBLE_EXACT for x in (a, b)):
        return False
    try:
        return float(a) == float(b)
    except OverflowError:  # beyond any double: only an exact match counts
        return False


def compare_results(expected: JsonValue, actual: JsonValue) -> Verdict:
    """PASS when equal with member order, WARN when only member order differs."""
    if values_equal(expected, actual, ordered=True):
        return Verdict.PASS
    if values_equal(expected, actual):
        return Verdict.WARN
    return Verdict.FAIL


def judge_response(case: VectorCase, response: Mapping[str, Any]) -> Judgement:
    """Judge a JSON-RPC response (``{"result": ...}`` or ``{"error": ...}``).

    A rejection case is judged by `judge_rejection` (code -32000 the MUST,
    rule and seq a SHOULD, kind a note). A result case is judged by
    `compare_results`. On a SHOULD case a failure is a warning.
    """
    judgement = _judge(case, response)
    if judgement.verdict is Verdict.FAIL and case.level == "SHOULD":
        return Judgement(Verdict.WARN, f"(SHOULD) {judgement.reason}")
    return judgement


def judge_rejection(case: VectorCase, error: object) -> Judgement:
    """Judge the ``error`` member of a response (None for a result) against a
    rejection case.

    Three levels, because the contract and the protocol promise different
    things (docs/vectors.md, "What a rejection is judged on"): rejecting
    (code -32000) is the MUST; naming the rule the input breaks
    (``error.data.rule``, any of the vector's) and the faulty event's seq
    (``error.data.seq``) is the diagnosis docs/adapter-protocol.md
    promises, so a missing or other one is a warning, except another seq
    on a case of a `SEQ_NAMING_RULES` rule, which breaks that rule (a
    failure); ``kind`` is informative, a note.
    """
    expected = case.expect["error"]
    expected_kind = expected["kind"]
    rules = case.expected_rules
    if not (isinstance(error, Mapping) and error.get("code") == REJECTED):
        got = f"error {_show(error)}" if error is not None else "a result"
        return Judgement(
            Verdict.FAIL,
            f"expected a rejection (code {REJECTED}, kind {expected_kind},"
            f" rule {_either(rules)}), got {got}",
        )
    data = error.get("data")
    data = data if isinstance(data, Mapping) else {}
    kind, rule, seq = data.get("kind"), data.get("rule"), data.get("seq")
    note = ""
    if kind is not None and kind != expected_kind:
        note = (
            f"the adapter says kind {_show(kind)} where the vector expects kind"
            f" {expected_kind} (kind is informative)"
        )
    misses: list[str] = []
    if rule is None:
        misses.append(
            f"names no rule (error.data.rule) where it must name {_either(rules)}"
        )
    elif rule not in rules:
        misses.append(f"names rule {_show(rule)} where it must name {_either(rules)}")
    if "seq" in expected:
        want = expected["seq"]
        if seq is None:
            misses.append(
                f"names no seq (error.data.seq) where it must name seq {want}"
            )
        elif not _same_seq(seq, want):
            number = isinstance(seq, int | float) and not isinstance(seq, bool)
            if number and SEQ_NAMING_RULES & set(case.rules):
                named = ", ".join(sorted(SEQ_NAMING_RULES & set(case.rules)))
                return Judgement(
                    Verdict.FAIL,
                    f"rejected, but the error names seq {_show(seq)} where the"
                    f" faulty event is seq {want} ({named} says the error names it)",
                    note,
                )
            misses.append(f"names seq {_show(seq)} where it must name seq {want}")
    if misses:
        return Judgement(
            Verdict.WARN,
            "(SHOULD) rejected as required, but the error " + "; ".join(misses),
            note,
        )
    return Judgement(Verdict.PASS, note=note)


def _either(rules: tuple[str, ...]) -> str:
    """``HDR-3`` or ``one of HDR-3, SYS-1``."""
    return rules[0] if len(rules) == 1 else "one of " + ", ".join(rules)


def _same_seq(seq: object, want: int) -> bool:
    """A seq is an integer (JSON-5: ``2.0`` is 2); a boolean is never one."""
    return isinstance(seq, int | float) and not isinstance(seq, bool) and seq == want


def _show(value: object) -> str:
    """`value` as JSON text for a message; never raises, whatever `value` is."""
    try:
        text = encode_json(value)
    except Exception:  # not a JSON value (NaN, a set...): show it as Python
        try:
            text = repr(value)
        except Exception:
            text = f"<{type(value).__name__}>"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _judge(case: VectorCase, response: Mapping[str, Any]) -> Judgement:
    error = response.get("error")
    if case.expects_error:
        return judge_rejection(case, error)
    if "result" not in response:
        return Judgement(
            Verdict.FAIL,
            f"expected result {_show(case.expected_result)}, got error {_show(error)}",
        )
    actual = response["result"]
    verdict = compare_results(case.expected_result, actual)
    if verdict is Verdict.PASS:
        return Judgement(verdict)
    what = "member order differs" if verdict is Verdict.WARN else "result differs"
    return Judgement(
        verdict,
        f"{what}: expected {_show(case.expected_result)}, got {_show(actual)}",
    )


# ---------------------------------------------------------------- loading


def vector_files(root: Path = VECTORS_DIR) -> list[Path]:
    """Every vector file under `root`, ordered by revision then family."""
    order = {revision.value: index for index, revision in enumerate(Revision)}
    files = [
        path
        for path in root.glob("*/*.json")
        if path.parent.name in order and path.stem in FAMILIES
    ]
    return sorted(
        files, key=lambda p: (order[p.parent.name], list(FAMILIES).index(p.stem))
    )


def stray_files(root: Path = VECTORS_DIR) -> list[Path]:
    """Files under `root` that are neither the schema nor a vector file."""
    known = {SCHEMA_PATH.resolve(), *(p.resolve() for p in vector_files(root))}
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and path.resolve() not in known
    )


def load_file(path: Path) -> list[VectorCase]:
    """Load one vector file and check its layout; raises `VectorError`."""
    try:
        document = load_json(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise VectorError(path, f"not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise VectorError(path, "a vector file is a JSON object")
    unknown = set(document) - {"$schema", "family", "method", "cases"}
    if unknown:
        raise VectorError(path, f"unknown members {sorted(unknown)}")
    if document.get("$schema") != SCHEMA_REF:
        raise VectorError(path, f"$schema must be {SCHEMA_REF!r}")
    family = document.get("family")
    if family != path.stem or family not in FAMILIES:
        raise VectorError(path, f"family {family!r} does not match the file name")
    method = FAMILIES[family]
    if document.get("method") != method:
        raise VectorError(path, f"method must be {method!r} for family {family!r}")
    try:
        directory = Revision(path.parent.name)
    except ValueError:
        raise VectorError(path, "a vector file lives in a revision directory") from None
    cases = document.get("cases")
    if not isinstance(cases, list) or not cases:
        raise VectorError(path, "cases must be a non-empty array")
    return [_load_case(path, family, method, directory, raw) for raw in cases]


def _load_case(
    path: Path, family: str, method: str, directory: Revision, raw: object
) -> VectorCase:
    if not isinstance(raw, dict):
        raise VectorError(path, "a case is a JSON object")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not case_id.startswith(family + "-"):
        raise VectorError(path, f"case id {case_id!r} must start with {family}-")

    def fail(message: str) -> VectorError:
        return VectorError(path, message, case_id=case_id)

    required = {
        "id",
        "rules",
        "level",
        "profile",
        "revisions",
        "description",
        "params",
        "expect",
    }
    if set(raw) != required:
        raise fail(f"a case has exactly the members {sorted(required)}")
    rules = raw["rules"]
    if not (
        isinstance(rules, list) and rules and all(isinstance(r, str) for r in rules)
    ):
        raise fail("rules must be a non-empty array of rule IDs")
    if raw["level"] not in LEVELS:
        raise fail(f"level must be one of {LEVELS}")
    if raw["profile"] not in PROFILES:
        raise fail(f"profile must be one of {PROFILES}")
    names = raw["revisions"]
    if not (
        isinstance(names, list) and names and all(isinstance(n, str) for n in names)
    ):
        raise fail("revisions must be a non-empty array of revision names")
    try:
        revisions = tuple(Revision(name) for name in names)
    except ValueError as bad_name:
        raise fail(str(bad_name)) from None
    if list(revisions) != sorted(set(revisions), key=list(Revision).index):
        raise fail("revisions must be distinct and in revision order")
    if revisions[0] is not directory:
        raise fail(
            f"the case first applies to {revisions[0].value}, so it belongs in"
            f" {revisions[0].value}/, not {directory.value}/"
        )
    description = raw["description"]
    if not isinstance(description, str) or not description or "\n" in description:
        raise fail("description must be one non-empty line")
    params = raw["params"]
    if not isinstance(params, dict) or "revision" in params:
        raise fail("params must be an object without revision (the runner adds it)")
    expect = raw["expect"]
    if not (isinstance(expect, dict) and len(expect) == 1):
        raise fail('expect must be {"result": ...} or {"error": ...}')
    if "error" in expect:
        _check_rejection(expect["error"], tuple(rules), params, fail)
    elif not isinstance(expect.get("result"), dict):
        raise fail("expect.result must be the method's result object")
    return VectorCase(
        id=case_id,
        family=family,
        method=method,
        rules=tuple(rules),
        level=raw["level"],
        profile=raw["profile"],
        revisions=revisions,
        description=description,
        params=params,
        expect=expect,
        path=path,
    )


_RULE_ID: Final = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-[0-9]+")


def _check_rejection(
    rejection: object,
    rules: tuple[str, ...],
    params: JsonObject,
    fail: Callable[[str], VectorError],
) -> None:
    """``expect.error``: a known kind, the rule (or rules) the error must name,
    each one of the case's rules, and a seq that is one of its events'."""
    if not (isinstance(rejection, dict) and rejection.get("kind") in ERROR_KINDS):
        raise fail(f"expect.error.kind must be one of {ERROR_KINDS}")
    unknown = set(rejection) - {"kind", "rule", "seq"}
    if unknown:
        raise fail(f"expect.error has unknown members {sorted(unknown)}")
    rule = rejection.get("rule")
    named = [rule] if isinstance(rule, str) else rule
    if not (
        isinstance(named, list)
        and (len(named) == 1 if isinstance(rule, str) else len(named) >= 2)
        and len(set(named)) == len(named)
        and all(isinstance(r, str) and _RULE_ID.fullmatch(r) for r in named)
    ):
        raise fail(
            "expect.error.rule must be a rule ID, or an array of two or more"
            " distinct rule IDs when the input breaks several"
        )
    if not set(named) <= set(rules):
        raise fail("every rule in expect.error.rule must be one of the case's rules")
    if "seq" in rejection:
        seq = rejection["seq"]
        events = params.get("events")
        seqs = (
            [e.get("seq") for e in events if isinstance(e, dict)]
            if isinstance(events, list)
            else []
        )
        if isinstance(seq, bool) or not isinstance(seq, int) or seq not in seqs:
            raise fail("expect.error.seq must be the seq of one of the params' events")


def load_cases(root: Path = VECTORS_DIR) -> list[VectorCase]:
    """Every case of every vector file; raises `VectorError` on a repeated id.

    Two cases that send the same method the same params (member order
    included) under a common revision are one case written twice: refused
    too, since the second shows nothing the first does not.
    """
    seen: dict[str, Path] = {}
    inputs: dict[tuple[str, str], list[VectorCase]] = {}
    cases: list[VectorCase] = []
    for path in vector_files(root):
        for case in load_file(path):
            if case.id in seen:
                raise VectorError(
                    path, f"id also used in {seen[case.id]}", case_id=case.id
                )
            seen[case.id] = path
            same = inputs.setdefault((case.method, encode_json(case.params)), [])
            for other in same:
                if set(other.revisions) & set(case.revisions):
                    raise VectorError(
                        path,
                        f"same method and params as {other.id}"
                        f" ({other.path.parent.name}/{other.path.name})"
                        " under a common revision",
                        case_id=case.id,
                    )
            same.append(case)
            cases.append(case)
    return cases


def iter_cases(
    root: Path = VECTORS_DIR, *, revisions: Iterable[Revision] | None = None
) -> Iterator[tuple[Revision, VectorCase]]:
    """Yield ``(revision, case)`` for every revision each case applies to.

    With `revisions`, only those (an implementation runs the one it
    declares).
    """
    wanted = set(Revision if revisions is None else revisions)
    for case in load_cases(root):
        for revision in case.revisions:
            if revision in wanted:
                yield revision, case


def codec_rule_ids(rules: Mapping[str, Rule]) -> frozenset[str]:
    """The rules the vectors must cover both ways (module docstring).

    Every MUST rule of the header, equality, delta, fold and snapshot
    areas, the writer's decision WRITER-1..5, and JSON-1..3; plus the two
    SHOULD rules on member order, JSON-3 and HDR-5.
    """
    return frozenset(
        rule_id
        for rule_id, rule in rules.items()
        if (rule.is_must and rule_id.startswith(CODEC_RULE_PREFIXES))
        or rule_id in CODEC_RULE_IDS
    )
