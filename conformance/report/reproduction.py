"""Minimal reproductions of failures: what to run, what was expected, what came.

For a vector, the case itself (method, revision, params) with its
expectation and the implementation's answer; for a differential property,
its shrunk counterexample as a vector; for a scenario check, the scenario
and the steps up to the one the check is about, with what the check
expected and found, as the judge recorded them on the `Check`. Each names
the first place the two differ (`first_difference`): a JSON path for
answers, the request field where the cache broke for cache checks. Pure:
results in; nothing here reads a fact back out of a check's id or message.
"""

from __future__ import annotations

import shlex

from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.harness.scenarios import Scenario, Step
from reqfold.conformance.json_text.paths import first_difference
from reqfold.conformance.quoting import bounded
from reqfold.conformance.report.model import Reproduction
from reqfold.conformance.verdict import Check
from reqfold.reference.json_values import JsonObject, JsonValue

EXCERPT = 300
"""Longest string kept in a reproduction's `found` (longer ones are cut)."""


# ------------------------------------------------------------ commands


def run_command(impl: str | None, *selection: str) -> str:
    """The ``reqfold run`` command that replays only `selection`."""
    words = ["reqfold", "run"]
    if impl is not None:
        words += ["--impl", impl]
    return shlex.join([*words, *selection])


# ------------------------------------------------------------ the codec parts


def vector_reproduction(
    case: VectorCase,
    revision: str,
    found: JsonObject | None,
    impl: str | None,
    *,
    profile: str | None = None,
) -> Reproduction:
    """A failing vector: the case, its expectation, the answer received.

    `profile` is the ``--profile`` the run was given, so the command judges
    the case as the run did."""
    answer = _answer(found)
    chosen = ("--profile", profile) if profile is not None else ()
    return Reproduction(
        kind="vector",
        command=run_command(impl, "--only", "vectors", "--revision", revision, *chosen),
        subject={
            "id": case.id,
            "file": _relative(str(case.path)),
            "method": case.method,
            "revision": revision,
            "params": case.params,
        },
        expected=case.expect,
        found=bounded(answer),
        first_difference=answer_difference(case.expect, answer),
    )


def property_reproduction(
    vector: JsonObject,
    method: str,
    revision: str,
    found: JsonObject | None,
    impl: str | None,
) -> Reproduction:
    """A failing property: its shrunk counterexample, as a vector case."""
    answer = _answer(found)
    expected = vector.get("expect")
    return Reproduction(
        kind="property",
        command=run_command(impl, "--only", "properties", "--revision", revision),
        subject={
            "id": vector.get("id"),
            "method": method,
            "revision": revision,
            "params": vector.get("params"),
            "vector": vector,
        },
        expected=bounded(expected),
        found=bounded(answer),
        first_difference=answer_difference(expected, answer),
    )


def answer_difference(expected: JsonValue, found: JsonObject | None) -> str | None:
    """Where an answer first differs from a vector's ``expect``.

    A rejection is expected as ``{"error": {"kind"}}`` and passes on any
    error with code -32000: a failing error answer differs in its code,
    whatever its ``kind``.
    """
    if found is None:
        return None
    if isinstance(expected, dict) and "error" in expected and "error" in found:
        return "$.error.code"
    return first_difference(expected, found)


def _answer(response: JsonObject | None) -> JsonObject | None:
    """The ``result`` or ``error`` of a response, written as a vector's ``expect``."""
    if response is None:
        return None
    if "result" in response:
        return {"result": response["result"]}
    return {"error": response.get("error")}


def _relative(path: str) -> str:
    marker = "/conformance/"
    return "conformance/" + path.split(marker, 1)[1] if marker in path else path


# ------------------------------------------------------------ scenarios


def _step_json(step: Step) -> JsonObject:
    dumped: JsonObject = {step.action: step.argument}
    if step.during:
        dumped["during"] = [
            {
                "when": {"contributor": reaction.contributor, "call": reaction.call},
                "then": list(reaction.then),
            }
            for reaction in step.during
        ]
    if step.expect:
        dumped["expect"] = step.expect
    return dumped


def _cut(value: JsonValue) -> JsonValue:
    """`value` with long strings cut, for a reproduction's `found`."""
    if isinstance(value, str):
        return value if len(value) <= EXCERPT else value[:EXCERPT] + "…"
    if isinstance(value, list):
        return [_cut(item) for item in value]
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    return value


def scenario_reproduction(
    check: Check, scenario: Scenario, impl: str | None
) -> Reproduction:
    """A failing scenario check: the steps up to the one it judged, and why.

    Everything comes from the check as the judge made it: the step it is
    about (every step is kept when it judged the whole run), what was
    expected and found, and where they first differ (the judge's
    expectation kinds, `reqfold.conformance.harness.expectations`, and the
    log's and cache checks record them).
    """
    step = check.step
    steps = scenario.steps if step is None else scenario.steps[: step + 1]
    return Reproduction(
        kind="scenario",
        command=run_command(
            impl,
            "--only",
            "scenarios",
            "--scenario",
            scenario.id,
            "--revision",
            check.revision,
        ),
        subject={
            "scenario": scenario.id,
            "file": _relative(str(scenario.path)),
            "revision": check.revision,
            "step": step,
            "steps": [_step_json(item) for item in steps],
        },
        expected=check.expected,
        found=bounded(_cut(check.found)),
        first_difference=check.first_difference,
    )
