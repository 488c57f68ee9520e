"""Judging an implementation's answer to a codec vector.

Results are compared as JSON values (JSON-2: ``true`` is not ``1``, ``1``
equals ``1.0``; an integer beyond 2^53 equals any number with the same
nearest double, JSON-5) *and* by object member order (JSON-3), giving a
`Verdict`: `Verdict.PASS` when both agree, `Verdict.WARN` when only the
member order differs (a SHOULD finding), `Verdict.FAIL` otherwise. On a
``SHOULD`` case a failure is reported as a warning. A rejection case is
judged by `judge_rejection`: the rejection itself (any JSON-RPC error
response with code -32000) is the MUST; the rule the error names
(``error.data.rule``) and the seq of the faulty event (``error.data.seq``)
are the diagnosis the adapter protocol promises, so a missing or other one
is a warning (a SHOULD finding), except a seq other than the delta's on a
``FOLD-2`` case, whose rule itself says the error names that seq: a
failure. The expected ``kind`` is informative: when the response's
``error.data.kind`` differs, the verdict says so in its `Judgement.note`.
Judging never raises on what an implementation answered, whatever its
values.
"""

from __future__ import annotations

import enum
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.json_text.values import encode_json, values_equal
from reqfold.conformance.quoting import MAX_TEXT, bounded
from reqfold.reference.json_values import JsonValue

REJECTED: Final = -32000
"""The JSON-RPC error code of a rejection the spec requires."""

SEQ_NAMING_RULES: Final = frozenset({"FOLD-2"})
"""Rules whose own text requires the error to name an event's seq: on a
case that demonstrates one, naming another seq breaks the rule (a
failure), where elsewhere a wrong or missing seq is a SHOULD finding."""


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
    """`value` as JSON text for a message, within `quoting`'s bounds (an
    answer of megabytes is not quoted whole); never raises, whatever
    `value` is."""
    try:
        text = encode_json(bounded(value))
    except Exception:  # not a JSON value (NaN, a set...): show it as Python
        try:
            text = reprlib.repr(value)
        except Exception:
            text = f"<{type(value).__name__}>"
    if len(text) > MAX_TEXT:
        text = f"{text[:MAX_TEXT]}<cut: {len(text) - MAX_TEXT} more characters>"
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
