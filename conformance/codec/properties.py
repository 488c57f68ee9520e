"""Differential properties: generated codec inputs, the reference as oracle.

Longer than the house's usual ~500 lines: the trial that runs one
property against an adapter (restarts, shrinking, stopping) and the
judgement of one answer against the reference's are one flow, read top to
bottom. What each property generates, and the rules it shows, is the
table in `reqfold.conformance.codec.property_table`; the generators live in
`reqfold.conformance.strategies`.

The vectors pin down chosen cases by hand; these properties search for
the cases nobody wrote. For each codec method, hypothesis generates
inputs a conforming writer produces (the *core profile*,
`reqfold.conformance.strategies`: valid headers, canonical pairs that differ by a
harness's edits, deltas `diff` yields, logs the writer wrote), sends each
to the implementation under test through the adapter protocol, and
compares the answer with the reference's answer to the same params:

* a result that equals the reference's, member order included, or a
  rejection (error) with the same code as the reference's, agrees;
* a result equal only when member order is ignored is a SHOULD finding
  (JSON-3): ``warn``, never a failure. So is a different value where the
  reference's own answer depends on member order (it changes when every
  object's members are sorted) and the implementation answered as if the
  members were sorted: an implementation with unordered maps;
* anything else (another value, a result where the reference rejects, an
  error where it answers) is a ``fail``: hypothesis shrinks the input and
  the result carries it as a ready-to-commit vector case whose expected
  answer is the reference's (`render_vector`);
* an adapter that crashes, hangs, breaks the protocol or answers -32603
  (its own internal failure) is an ``error``: no verdict, and the property
  stops there; a broken adapter (not a -32603 answer) is restarted for the
  next one.

Runs are deterministic (a fixed seed, no example database, no deadline,
no health checks, and none of the constants Hypothesis would otherwise take
from whatever local modules the process has loaded:
`reqfold.conformance.codec.local_constants`), so the same implementation gets the
same report from the same command, installed or from a checkout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from hypothesis import (
    HealthCheck,
    Phase,
    Verbosity,
    given,
    seed as seeded,
    settings,
)

from reqfold.conformance.adapters.connection import Connection
from reqfold.conformance.adapters.inprocess import DirectConnection
from reqfold.conformance.adapters.lifecycle import declared_revisions, describe
from reqfold.conformance.codec.cases import ERROR_KINDS, STRICT
from reqfold.conformance.codec.judging import REJECTED, Verdict, compare_results
from reqfold.conformance.codec.local_constants import without_local_constants
from reqfold.conformance.codec.property_table import (
    MEMBER_ORDER_RULES,
    PROPERTIES,
    CodecProperty,
)
from reqfold.conformance.codec.runner import (
    INTERNAL_ERROR,
    MAX_RESTARTS,
    MAX_TIMEOUTS_IN_A_ROW,
    judged_profiles,
)
from reqfold.conformance.errors import AdapterTimeout
from reqfold.conformance.json_text.values import encode_json, values_equal
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.quoting import bounded
from reqfold.conformance.verdict import Check, rules_level
from reqfold.reference.json_values import JsonObject, JsonValue, copy_json
from reqfold.reference.revisions import ALL_REVISIONS, Revision

DEFAULT_EXAMPLES: Final = 40
"""Examples per property and revision: enough for each known-bad adapter of
the tests to be caught, few enough that a run of every property over the
revisions stays a few seconds against the reference through a child
process (docs/benchmarks.md, "Numbers behind the code"). An
implementation that fails takes longer: its counterexamples are shrunk."""

SHRINK_STEPS: Final = 300
"""Inputs tried while shrinking a counterexample before settling for the
smallest found so far: bounds the time a failing implementation costs."""

_SETTINGS: Final = settings(
    settings.get_profile("default"),
    database=None,
    deadline=None,
    derandomize=False,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.quiet,
    report_multiple_bugs=False,
    print_blob=False,
)
"""Independent of the caller's hypothesis profile, so a report is too."""


# ---------------------------------------------------------------- results


PART = "properties"
"""The part every property check belongs to."""


def counterexample(result: Check) -> JsonObject | None:
    """A property check's shrunk counterexample, as a vector case (docs/vectors.md)
    whose expected answer is the reference's: for a ``fail`` (and a
    ``warn``) that has one; see `render_vector`."""
    vector = result.detail.get("vector")
    return vector if isinstance(vector, dict) else None


def method_of(result: Check) -> str:
    """The codec method a property check called (``codec/fold``, ...)."""
    return str(result.detail.get("method", ""))


def examples_of(result: Check) -> int:
    """How many inputs the implementation answered (generation and shrinking)."""
    examples = result.detail.get("examples", 0)
    return examples if isinstance(examples, int) else 0


def render_vector(result: Check) -> str:
    """The counterexample as pretty JSON, ready to paste into a vector file's
    ``cases`` (under the directory of its first revision); ValueError when
    the result has none."""
    vector = counterexample(result)
    if vector is None:
        raise ValueError(f"{result.id} has no counterexample ({result.outcome})")
    return json.dumps(vector, indent=2, ensure_ascii=False, allow_nan=False)


# ---------------------------------------------------------------- running


def run_properties(
    connect: Callable[[], Connection],
    revisions: Iterable[Revision] | None = None,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    properties: Iterable[CodecProperty] = PROPERTIES,
    on_result: Callable[[Check], None] | None = None,
    profile: str | None = None,
) -> list[Check]:
    """Run `properties` against the implementation `connect` starts.

    The inputs are those of the ``core`` profile unless the implementation
    is judged on ``strict`` (it claims it in ``initialize``, or `profile`
    is ``strict``): then the properties also generate non-canonical input
    where a method reads it only in ``strict`` (``equals``).

    `connect` starts (and, after an adapter error, restarts) the
    implementation, as for `reqfold.conformance.codec.runner.run_vectors`;
    `revisions` limits the run (default: every revision); a revision the
    implementation does not declare in ``initialize`` is a ``skip``.
    `examples` is hypothesis's ``max_examples`` per property and revision,
    `seed` its seed. Results come revision by revision, in the order of
    `properties`; nothing raised by the implementation escapes. The
    implementation is closed when the run ends.
    """
    wanted = list(ALL_REVISIONS if revisions is None else revisions)
    chosen = list(properties)
    plan = [
        (prop, revision)
        for revision in ALL_REVISIONS
        if revision in wanted
        for prop in chosen
        if revision in prop.revisions
    ]
    results: list[Check] = []
    if not plan:
        return results

    def emit(result: Check) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    live: Connection | None = None
    timeouts = 0
    try:
        try:
            live = connect()
            identity = live.initialize()
            declared = {r.value for r in declared_revisions(identity)}
            strict = STRICT in judged_profiles(identity, profile)
        except Exception as error:  # it did not start: no verdict on anything
            for prop, revision in plan:
                emit(
                    _result(
                        prop,
                        revision,
                        Outcome.ERROR,
                        f"the adapter did not start: {describe(error)}",
                    )
                )
            return results
        for prop, revision in plan:
            if revision.value not in declared:
                emit(
                    _result(
                        prop,
                        revision,
                        Outcome.SKIP,
                        f"the implementation does not declare {revision.value}",
                    )
                )
                continue
            if live is None:
                emit(
                    _result(
                        prop,
                        revision,
                        Outcome.ERROR,
                        "the adapter could not be restarted",
                    )
                )
                continue
            if timeouts >= MAX_TIMEOUTS_IN_A_ROW:
                emit(
                    _result(
                        prop,
                        revision,
                        Outcome.ERROR,
                        f"not run: the adapter timed out on {timeouts} properties"
                        " in a row",
                    )
                )
                continue
            trial = _Trial(prop, revision, live, strict=strict)
            emit(trial.run(examples=examples, seed=seed))
            timeouts = timeouts + 1 if trial.timed_out else 0
            if trial.broken:
                _close(live)
                live = _restart(connect)
        return results
    finally:
        if live is not None:
            _close(live)


def _result(
    prop: CodecProperty,
    revision: Revision,
    outcome: Outcome,
    message: str,
    *,
    examples: int = 0,
    vector: JsonObject | None = None,
) -> Check:
    rules = _rules_shown(prop, revision, outcome)
    return Check(
        part=PART,
        id=prop.id(revision),
        name=prop.id(revision),
        revision=revision.value,
        rules=rules,
        level="SHOULD" if outcome is Outcome.WARN else rules_level(rules),
        outcome=outcome,
        message=message,
        detail={"method": prop.method, "examples": examples, "vector": vector},
    )


def _rules_shown(
    prop: CodecProperty, revision: Revision, outcome: Outcome
) -> tuple[str, ...]:
    """The rules a result speaks to: a pass shows them all (member order too);
    a member-order warning only JSON-3; anything else the MUST rules."""
    if outcome is Outcome.PASS:
        return prop.rules_for(revision)
    if outcome is Outcome.WARN:
        return MEMBER_ORDER_RULES
    return prop.must_rules(revision)


class _Stop(BaseException):
    """The implementation broke (no verdict): ends the hypothesis run at once.

    A BaseException, so hypothesis neither shrinks nor replays it.
    """


class _ShrinkingDone(BaseException):
    """`SHRINK_STEPS` inputs tried while shrinking: keep the smallest so far."""


class _Mismatch(Exception):
    """The implementation's answer to `params` differs from the reference's."""

    def __init__(
        self,
        params: JsonObject,
        expected: JsonObject,
        reason: str,
        *,
        order_only: bool,
    ) -> None:
        super().__init__(reason)
        self.params = params
        self.expected = expected
        self.reason = reason
        self.order_only = order_only


@dataclass(slots=True)
class _Trial:
    """One property under one revision against one live connection."""

    prop: CodecProperty
    revision: Revision
    connection: Connection
    strict: bool = False
    """Judged on the ``strict`` profile: its inputs are generated too."""
    oracle: DirectConnection = field(default_factory=DirectConnection)
    examples: int = 0
    broken: bool = False
    timed_out: bool = False
    """The adapter broke by not answering in time."""
    stop_reason: str = ""
    first_order: _Mismatch | None = None
    latest: _Mismatch | None = None
    """The last mismatch raised in this search: while shrinking, the smallest."""
    shrink_steps: int = 0

    def run(self, *, examples: int, seed: int) -> Check:
        """Search for a MUST disagreement; failing none, for an order-only one."""
        try:
            found, note = self._search(examples=examples, seed=seed, order_fails=False)
            if found is not None:
                return self._found(found, Outcome.FAIL, note)
            if self.first_order is None:
                return self._finish(
                    Outcome.PASS, f"{self.examples} examples agreed with the reference"
                )
            # The same seed meets the same input again, then shrinks it.
            unshrunk = self.first_order
            found, note = self._search(examples=examples, seed=seed, order_fails=True)
        except _Stop:
            return self._finish(
                Outcome.ERROR,
                f"after {self.examples} examples, the adapter broke:"
                f" {self.stop_reason}",
            )
        except Exception as error:  # a bug of ours, or hypothesis's refusal
            return self._finish(
                Outcome.ERROR, f"the property could not run: {describe(error)}"
            )
        if found is None:
            return self._found(unshrunk, Outcome.WARN, " (not shrunk)")
        if not found.order_only:  # met while shrinking: a failure after all
            return self._found(found, Outcome.FAIL, note)
        return self._found(found, Outcome.WARN, note)

    def _search(
        self, *, examples: int, seed: int, order_fails: bool
    ) -> tuple[_Mismatch | None, str]:
        """Run hypothesis; the (shrunk) mismatch it found, and a note on it."""
        self.latest, self.shrink_steps = None, 0

        @settings(_SETTINGS, max_examples=examples)
        @seeded(seed)
        @given(self.prop.inputs(self.revision, strict=self.strict))
        def search(params: JsonObject) -> None:
            self._check(params, order_fails=order_fails)

        try:
            with without_local_constants():
                search()
        except _Mismatch as mismatch:
            return mismatch, ""
        except _ShrinkingDone:
            return self.latest, f" (shrinking stopped after {SHRINK_STEPS} steps)"
        except Exception as error:  # hypothesis found it, then gave up (Flaky)
            if self.latest is None:
                raise
            return self.latest, f" (not shrunk: {describe(error)})"
        return None, ""

    # ------------------------------------------------------------ one input

    def _ask(self, connection: Connection, params: JsonObject) -> JsonObject:
        sent = copy_json(params)
        sent["revision"] = self.revision.value
        return connection.request(self.prop.method, sent)

    def _check(self, params: JsonObject, *, order_fails: bool) -> None:
        if self.latest is not None:  # hypothesis is shrinking what it found
            self.shrink_steps += 1
            if self.shrink_steps > SHRINK_STEPS:
                raise _ShrinkingDone
        self.examples += 1
        try:
            got = self._ask(self.connection, params)
        except Exception as failure:  # a broken adapter, or a bug of ours
            self.broken = True
            self.timed_out = isinstance(failure, AdapterTimeout)
            self.stop_reason = f"{describe(failure)}; input: {_short(params)}"
            raise _Stop from None
        error = got.get("error")
        if isinstance(error, dict) and error.get("code") == INTERNAL_ERROR:
            message = str(error.get("message", ""))[:200]
            self.stop_reason = (
                f"the implementation failed internally (-32603): {message};"
                f" input: {_short(params)}"
            )
            raise _Stop
        expected = self._ask(self.oracle, params)
        verdict, reason = self._judge(params, expected, got)
        if verdict is Verdict.PASS:
            return
        mismatch = _Mismatch(
            params, expected, reason, order_only=verdict is Verdict.WARN
        )
        if verdict is Verdict.FAIL:
            self.latest = mismatch
            raise mismatch
        if self.first_order is None:
            self.first_order = mismatch
        if order_fails:
            self.latest = mismatch
            raise mismatch

    def _judge(
        self, params: JsonObject, expected: JsonObject, got: JsonObject
    ) -> tuple[Verdict, str]:
        """PASS, WARN (member order only) or FAIL, and what differed."""
        if "result" not in expected or "result" not in got:
            code = _error_code(expected)
            if code is not None and code == _error_code(got):
                return Verdict.PASS, ""
            return Verdict.FAIL, (
                f"the reference answers {_answer(expected)},"
                f" the implementation {_answer(got)}"
            )
        want, have = expected["result"], got["result"]
        verdict = compare_results(want, have)
        if verdict is Verdict.PASS:
            return verdict, ""
        shown = f"reference {_show(want)}, implementation {_show(have)}"
        if verdict is Verdict.WARN:
            return verdict, f"member order differs (JSON-3): {shown}"
        unordered = self._ask(self.oracle, _sorted(params)).get("result")
        if not values_equal(unordered, want) and values_equal(unordered, have):
            return Verdict.WARN, (
                f"the answer depends on member order (JSON-3) and the"
                f" implementation answered as if members were sorted: {shown}"
            )
        return Verdict.FAIL, f"result differs: {shown}"

    # ------------------------------------------------------------ outcomes

    def _finish(
        self, outcome: Outcome, message: str, vector: JsonObject | None = None
    ) -> Check:
        return _result(
            self.prop,
            self.revision,
            outcome,
            message,
            examples=self.examples,
            vector=vector,
        )

    def _found(self, mismatch: _Mismatch, outcome: Outcome, note: str) -> Check:
        vector = self._vector(mismatch, should=outcome is Outcome.WARN)
        shrunk = "" if note else ", shrunk"
        return self._finish(
            outcome,
            f"after {self.examples} examples{shrunk}{note}: {mismatch.reason}",
            vector,
        )

    def _vector(self, mismatch: _Mismatch, *, should: bool) -> JsonObject | None:
        """`mismatch` as a vector case, or None when the reference's answer is
        not one a vector can expect (an error other than a rejection)."""
        expect = _expectation(mismatch.expected)
        if expect is None:
            return None
        revisions = [
            revision
            for revision in self.prop.revisions
            if revision is self.revision
            or _expectation(self._ask_as(revision, mismatch.params)) == expect
        ]
        if should:
            rules: tuple[str, ...] = MEMBER_ORDER_RULES
        else:
            rules = tuple(
                rule
                for rule in self.prop.rules
                if all(rule in self.prop.must_rules(r) for r in revisions)
            )
            if not rules:  # keep the rules of the revision it failed in
                revisions, rules = [self.revision], self.prop.must_rules(self.revision)
            if "error" in expect:  # the rule the rejection names is one it shows
                rules = tuple(dict.fromkeys((*rules, expect["error"]["rule"])))
        family = self.prop.family
        digest = hashlib.sha256(
            encode_json(
                {"method": self.prop.method, "params": mismatch.params}
            ).encode()
        ).hexdigest()[:10]
        what = "differed only in member order" if should else "differed"
        return {
            "id": f"{family}-generated-{digest}",
            "rules": list(rules),
            "level": "SHOULD" if should else "MUST",
            "profile": "core",  # generated inputs are what a conforming writer makes
            "revisions": [revision.value for revision in revisions],
            "description": f"generated by {self.prop.id(self.revision)}:"
            f" an input where an implementation's answer {what} from the reference's",
            "params": copy_json(mismatch.params),
            "expect": expect,
        }

    def _ask_as(self, revision: Revision, params: JsonObject) -> JsonObject:
        sent = copy_json(params)
        sent["revision"] = revision.value
        return self.oracle.request(self.prop.method, sent)


def _expectation(response: JsonObject) -> JsonObject | None:
    """A vector's ``expect`` for the reference's `response`, in JSON order."""
    if "result" in response:
        return {"result": copy_json(response["result"])}
    error = response.get("error")
    if not isinstance(error, dict) or error.get("code") != REJECTED:
        return None
    data = error.get("data")
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    if kind not in ERROR_KINDS:
        return None
    rule = data.get("rule")
    if not isinstance(rule, str):
        return None
    expect: JsonObject = {"kind": kind, "rule": rule}
    if isinstance(data.get("seq"), int):
        expect["seq"] = data["seq"]
    return {"error": expect}


def _sorted(value: JsonValue) -> JsonValue:
    """`value` with every object's members in sorted order."""
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    return value


def _show(value: JsonValue, limit: int = 300) -> str:
    try:
        text = encode_json(bounded(value))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _short(params: JsonObject) -> str:
    return _show(params, 200)


def _error_code(response: JsonObject) -> object:
    """The code of an error response; None for a result."""
    error = response.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _answer(response: JsonObject) -> str:
    if "result" in response:
        return f"result {_show(response['result'])}"
    return f"error {_error_code(response)}"


def _close(connection: Connection) -> None:
    with contextlib.suppress(Exception):  # best effort: never costs the report
        connection.close()


def _restart(connect: Callable[[], Connection]) -> Connection | None:
    for _ in range(MAX_RESTARTS):
        connection: Connection | None = None
        try:
            connection = connect()
            connection.initialize()
        except Exception:
            if connection is not None:
                _close(connection)
            continue
        return connection
    return None
