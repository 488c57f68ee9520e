"""Minimal reproductions of failures: what to run, what was expected, what came.

For a vector, the case itself (method, revision, params) with its
expectation and the implementation's answer; for a differential property,
its shrunk counterexample as a vector; for a scenario check, the scenario
and the steps up to the one the check is about, with what the step
expected and what the evidence shows. Each names the first place the two
differ (`first_difference`): a JSON path for answers, the request field
where the cache broke for cache checks. Pure: results and evidence in.
"""

from __future__ import annotations

import math
import re
import shlex

from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.scenarios import Scenario, Step
from reqfold.conformance.quoting import bounded
from reqfold.conformance.report.model import Reproduction
from reqfold.reference.json_values import JsonObject, JsonValue

EXCERPT = 300
"""Longest string kept in a reproduction's `found` (longer ones are cut)."""


# ------------------------------------------------------------ JSON paths


def _key_path(path: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def _same_number(a: JsonValue, b: JsonValue) -> bool:
    both = isinstance(a, int | float) and isinstance(b, int | float)
    if not both or isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, float) and math.isnan(a):
        return False
    return bool(a == b)


def first_difference(
    expected: JsonValue, found: JsonValue, path: str = "$"
) -> str | None:
    """The path of the first place `found` differs from `expected`, or None.

    Values compare as JSON (``true`` is not ``1``, ``1`` equals ``1.0``);
    objects first by members (a missing or extra member is its own path),
    then by member order, which reports the object itself.
    """
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in expected:
            if key not in found:
                return _key_path(path, key)
            inner = first_difference(expected[key], found[key], _key_path(path, key))
            if inner is not None:
                return inner
        for key in found:
            if key not in expected:
                return _key_path(path, key)
        return None if list(expected) == list(found) else path
    if isinstance(expected, list) and isinstance(found, list):
        for index, (a, b) in enumerate(zip(expected, found, strict=False)):
            inner = first_difference(a, b, f"{path}[{index}]")
            if inner is not None:
                return inner
        if len(expected) != len(found):
            return f"{path}[{min(len(expected), len(found))}]"
        return None
    if _same_number(expected, found):
        return None
    if type(expected) is type(found) and expected == found:
        return None
    return path


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


def _send_step(scenario: Scenario, number: int) -> int | None:
    """The index among the scenario's steps of its `number`-th send (from 1)."""
    sends = [i for i, step in enumerate(scenario.steps) if step.action == "send"]
    return sends[number - 1] if 0 < number <= len(sends) else None


def _send_of_request(evidence: Evidence, position: int) -> int | None:
    """The send (from 1) during which the session's `position`-th request left."""
    for number, send in enumerate(evidence.sends, start=1):
        if send.captures_before <= position < send.captures_after:
            return number
    return None


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
    check_id: str,
    scenario: Scenario,
    revision: str,
    evidence: Evidence | None,
    impl: str | None,
    message: str = "",
) -> Reproduction:
    """A failing scenario check: the steps up to the one it judged, and why.

    The check's name (its id after ``scenario@revision/``) says what it
    judged: ``send-N/...`` a send, ``request-N`` and ``cache/request-N``
    one request (so the send it left in), ``calls/...`` a contributor's
    call count. Other checks (the log's rules, ``absent/...``) judge the
    whole run: every step is kept, and the message says where.
    """
    name = check_id.split("/", 1)[1] if "/" in check_id else check_id
    expected: JsonValue = None
    found: JsonValue = None
    difference: str | None = None
    step: int | None = None
    comparable = True
    """`expected` and `found` have one shape: their first difference is a path."""
    if match := re.fullmatch(r"send-(\d+)/(end|requests|request-(\d+))", name):
        number = int(match[1])
        step = _send_step(scenario, number)
        expected, found = _send_expectation(scenario, evidence, number, match)
        comparable = match[3] is None
    elif match := re.fullmatch(r"(cache/)?request-(\d+)", name):
        position = int(match[2])
        send = None if evidence is None else _send_of_request(evidence, position)
        step = None if send is None else _send_step(scenario, send)
        if match[1] and evidence is not None:
            expected, found, difference = _cache_expectation(evidence, position)
        else:
            expected, found = _request_expectation(scenario, evidence, position)
            comparable = False
    elif match := re.fullmatch(r"calls/(.+)@([^@#]+)", name):
        contributor, instance = match[1], match[2].partition("#")[0]
        for item in scenario.expect:
            if (item.get("check"), item.get("contributor"), item.get("instance")) == (
                "calls",
                contributor,
                instance,
            ):
                expected = {"calls": item.get("count")}
        if evidence is not None:
            found = {"calls": evidence.calls.get((instance, contributor), 0)}
    elif match := re.fullmatch(r"absent/(.+)", name):
        expected = {"absent": match[1]}
        # where the text was found, as the check's message names it: the
        # log's line and each request (never a bare null)
        places = re.search(
            r" was found in (.+)$", message.splitlines()[0] if message else ""
        )
        if places is not None:
            found = {"foundIn": places[1].split(", ")}
        comparable = False
    elif name.startswith("log/"):
        expected, found, difference = _log_finding(message)
        comparable = False
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
            revision,
        ),
        subject={
            "scenario": scenario.id,
            "file": _relative(str(scenario.path)),
            "revision": revision,
            "step": step,
            "steps": [_step_json(item) for item in steps],
        },
        expected=expected,
        found=bounded(_cut(found)),
        first_difference=difference
        if difference is not None or not comparable or None in (expected, found)
        else first_difference(expected, found),
    )


_FINDING = re.compile(
    r"^(?P<where>line \d+(?:, seq \d+)?): .*?"
    r"(?: at (?P<path>[^\s(]+))? \(expected (?P<expected>.*), found (?P<found>.*)\)$",
    re.DOTALL,
)
"""A log check's message: the checker's first finding, ``line N, seq S: ... at
PATH (expected X, found Y)`` (reqfold.conformance.harness.checks)."""


def _log_finding(message: str) -> tuple[JsonValue, JsonValue, str | None]:
    """Expected, found and the path out of a log check's message, when it says."""
    match = _FINDING.match(message.splitlines()[0] if message else "")
    if match is None:
        return None, None, None
    where = match["where"]
    return (
        {"at": where, "value": match["expected"]},
        {"at": where, "value": match["found"]},
        match["path"],
    )


def _send_expectation(
    scenario: Scenario, evidence: Evidence | None, number: int, match: re.Match[str]
) -> tuple[JsonValue, JsonValue]:
    step = _send_step(scenario, number)
    expect = scenario.steps[step].expect if step is not None else {}
    what = match[2]
    send = (
        evidence.sends[number - 1]
        if evidence is not None and number <= len(evidence.sends)
        else None
    )
    if what == "end":
        return (
            {"end": expect.get("end")},
            None if send is None else {"end": send.reason.get("kind")},
        )
    if what == "requests":
        return (
            {"requests": expect.get("requests")},
            None
            if send is None
            else {"requests": send.captures_after - send.captures_before},
        )
    index = int(match[3])
    item = next(
        (
            item
            for item in scenario.expect
            if item.get("check") == "request"
            and item.get("send") == number
            and item.get("index") == index
        ),
        None,
    )
    position = None if send is None else send.captures_before + index
    return _request_item(item), _request_found(evidence, position)


def _request_expectation(
    scenario: Scenario, evidence: Evidence | None, position: int
) -> tuple[JsonValue, JsonValue]:
    item = next(
        (
            item
            for item in scenario.expect
            if item.get("check") == "request"
            and "send" not in item
            and item.get("index") == position
        ),
        None,
    )
    return _request_item(item), _request_found(evidence, position)


def _request_item(item: JsonObject | None) -> JsonValue:
    if item is None:
        return None
    return {key: item[key] for key in ("contains", "lacks", "opens") if key in item}


def _request_found(evidence: Evidence | None, position: int | None) -> JsonValue:
    """The messages of a captured request (what the request check reads)."""
    if evidence is None or position is None or position >= len(evidence.captures):
        return None
    body = evidence.captures[position].body
    messages = body.get("messages") if isinstance(body, dict) else None
    return {"request": position, "messages": messages}


def _cache_expectation(
    evidence: Evidence, position: int
) -> tuple[JsonValue, JsonValue, str | None]:
    if position >= len(evidence.captures):
        return None, None, None
    positions = {capture.index: n for n, capture in enumerate(evidence.captures)}
    diagnostic = evidence.captures[position].diagnostic
    expected: JsonObject = {"relation": ["append", "repeat"], "closest": position - 1}
    if diagnostic is None:
        return expected, None, None
    closest = diagnostic["closest_request"]
    found: JsonObject = {
        "relation": diagnostic["relation"],
        "closest": None if closest is None else positions.get(closest),
        "promptTokens": diagnostic["prompt_tokens"],
        "cachedTokens": diagnostic["cached_tokens"],
    }
    divergence = diagnostic["divergence"] or diagnostic["echo_divergence"]
    if divergence is not None:
        found["divergence"] = dict(divergence)
    return expected, found, None if divergence is None else divergence["field"]
