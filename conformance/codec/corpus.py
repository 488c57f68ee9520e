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
``1``, ``1`` equals ``1.0``) *and* by object member order (JSON-3), giving
a `Verdict`: `Verdict.PASS` when both agree, `Verdict.WARN` when only the
member order differs (a SHOULD finding), `Verdict.FAIL` otherwise. On a
``SHOULD`` case a failure is reported as a warning. A rejection case
passes on any JSON-RPC error response with code -32000; the expected
``kind`` (and ``seq``) are informative: when the response's
``error.data.kind`` differs, the pass says so in its `Judgement.note`.
Judging never raises on what an implementation answered, whatever its
values.
"""

from __future__ import annotations

import copy
import enum
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.codec.judge_equal import same_json
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
        """``{"kind", "seq"?}`` for a rejection case, else None."""
        error: JsonObject | None = self.expect.get("error")
        return error

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
    ``1e400`` (or ``-1e400``), the way the vector files spell it, so the
    text stays JSON; NaN raises ValueError.
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
                stack.append(_Token(prefix + json.dumps(key, ensure_ascii=False) + ":"))
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
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str


def values_equal(a: JsonValue, b: JsonValue, *, ordered: bool = False) -> bool:
    """Compare JSON values (JSON-2); with ``ordered``, member order too (JSON-3).

    The judge's own comparison (`conformance.codec.judge_equal`), never the
    reference's `json_equal`: a defect there must not blind the judge.
    """
    return same_json(a, b, ordered=ordered)


def compare_results(expected: JsonValue, actual: JsonValue) -> Verdict:
    """PASS when equal with member order, WARN when only member order differs."""
    if values_equal(expected, actual, ordered=True):
        return Verdict.PASS
    if values_equal(expected, actual):
        return Verdict.WARN
    return Verdict.FAIL


def judge_response(case: VectorCase, response: Mapping[str, Any]) -> Judgement:
    """Judge a JSON-RPC response (``{"result": ...}`` or ``{"error": ...}``).

    A rejection case passes on any error with code -32000 (a differing
    ``error.data.kind`` is noted in `Judgement.note`). A result case is
    judged by `compare_results`. On a SHOULD case a failure is a warning.
    """
    judgement = _judge(case, response)
    if judgement.verdict is Verdict.FAIL and case.level == "SHOULD":
        return Judgement(Verdict.WARN, f"(SHOULD) {judgement.reason}")
    return judgement


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
        expected_kind = case.expect["error"]["kind"]
        if isinstance(error, Mapping) and error.get("code") == REJECTED:
            data = error.get("data")
            kind = data.get("kind") if isinstance(data, Mapping) else None
            if kind is not None and kind != expected_kind:
                return Judgement(
                    Verdict.PASS,
                    note=f"rejected as required, but the adapter says kind"
                    f" {_show(kind)} where the vector expects kind {expected_kind}"
                    f" (kind is informative)",
                )
            return Judgement(Verdict.PASS)
        got = f"error {_show(error)}" if error is not None else "a result"
        return Judgement(
            Verdict.FAIL,
            f"expected a rejection (code {REJECTED}, kind {expected_kind}), got {got}",
        )
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

    required = {"id", "rules", "level", "revisions", "description", "params", "expect"}
    if set(raw) != required:
        raise fail(f"a case has exactly the members {sorted(required)}")
    rules = raw["rules"]
    if not (
        isinstance(rules, list) and rules and all(isinstance(r, str) for r in rules)
    ):
        raise fail("rules must be a non-empty array of rule IDs")
    if raw["level"] not in LEVELS:
        raise fail(f"level must be one of {LEVELS}")
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
        rejection = expect["error"]
        if not (isinstance(rejection, dict) and rejection.get("kind") in ERROR_KINDS):
            raise fail(f"expect.error.kind must be one of {ERROR_KINDS}")
    elif not isinstance(expect.get("result"), dict):
        raise fail("expect.result must be the method's result object")
    return VectorCase(
        id=case_id,
        family=family,
        method=method,
        rules=tuple(rules),
        level=raw["level"],
        revisions=revisions,
        description=description,
        params=params,
        expect=expect,
        path=path,
    )


def load_cases(root: Path = VECTORS_DIR) -> list[VectorCase]:
    """Every case of every vector file; raises `VectorError` on a repeated id."""
    seen: dict[str, Path] = {}
    cases: list[VectorCase] = []
    for path in vector_files(root):
        for case in load_file(path):
            if case.id in seen:
                raise VectorError(
                    path, f"id also used in {seen[case.id]}", case_id=case.id
                )
            seen[case.id] = path
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
