"""Differential properties: generated inputs, the reference as oracle.

The reference must agree with itself on every property, in process and
as a child process. Known-bad implementations must be caught: a real
defect is a ``fail`` whose shrunk counterexample is a vector case ready to
commit (it validates against the schema, the loader accepts it, the
reference passes it and the bad implementation fails it); unordered maps
only draw ``warn``; a crash is an ``error`` and the run goes on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from example_counts import scaled_examples
from hypothesis import HealthCheck, given, settings

from reqfold.conformance.adapters.connection import Connection, StdioConnection
from reqfold.conformance.adapters.inprocess import DirectConnection
from reqfold.conformance.codec.cases import (
    FAMILIES,
    SCHEMA_PATH,
    SCHEMA_REF,
    VectorCase,
)
from reqfold.conformance.codec.loading import load_cases, load_file
from reqfold.conformance.codec.properties import (
    DEFAULT_EXAMPLES,
    counterexample,
    examples_of,
    method_of,
    render_vector,
    run_properties,
)
from reqfold.conformance.codec.property_table import PROPERTIES, CodecProperty
from reqfold.conformance.codec.runner import run_vectors
from reqfold.conformance.errors import AdapterCrashed, AdapterStartupFailed
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.rules import load_rules
from reqfold.conformance.verdict import Check
from reqfold.reference.header import diff_header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision
from reqfold.reference.writer import record_header

BAD = Path(__file__).parent / "bad_adapters"
RULES = load_rules()


# ---------------------------------------------------------------- helpers


def bad_adapter(name: str) -> Callable[[], Connection]:
    """A factory starting `bad_adapters/<name>.py` as a child process."""
    return lambda: StdioConnection(
        [sys.executable, str(BAD / f"{name}.py")], timeout=10.0
    )


def the_property(family: str) -> CodecProperty:
    return next(prop for prop in PROPERTIES if prop.family == family)


class Patched(DirectConnection):
    """The in-process reference with some methods answered differently."""

    def __init__(
        self,
        overrides: dict[str, Callable[[JsonObject], JsonObject]],
        *,
        revisions: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.overrides = overrides
        self.revisions = revisions

    def initialize(self) -> JsonObject:
        identity = super().initialize()
        if self.revisions is not None:
            identity["revisions"] = self.revisions
        return identity

    def request(self, method: str, params: JsonObject) -> JsonObject:
        handler = self.overrides.get(method)
        if handler is None:
            return super().request(method, params)
        return {"result": handler(params)}


def never_falls_back(params: JsonObject) -> JsonObject:
    """A writer that logs every change as a delta (breaks WRITER-4)."""
    revision = Revision(params["revision"])
    event = record_header(
        params["baseline"], params["loggedThisInstance"], params["header"], revision
    )
    if event is not None and event["data"].get("reason") == "fallback":
        delta = diff_header(params["baseline"], params["header"], revision)
        event = {"type": "request/header-delta", "data": delta}
    return {"event": event}


def sorted_members(value: Any) -> Any:
    if isinstance(value, list):
        return [sorted_members(item) for item in value]
    if isinstance(value, dict):
        return {key: sorted_members(value[key]) for key in sorted(value)}
    return value


def unordered(method: str) -> Callable[[JsonObject], JsonObject]:
    """`method` as an implementation with unordered maps answers it."""

    def handler(params: JsonObject) -> JsonObject:
        revision = params["revision"]
        answer = DirectConnection().request(
            method, {**sorted_members(params), "revision": revision}
        )
        return sorted_members(answer["result"])  # type: ignore[no-any-return]

    return handler


def outcomes(results: list[Check]) -> dict[str, str]:
    return {result.id: result.outcome.value for result in results}


@cache
def vector_file_validator() -> jsonschema.Draft202012Validator:
    """The vector files' schema, read and compiled once per process."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@cache
def committed_ids() -> frozenset[str]:
    """The ids of the vectors the project holds, loaded once per process."""
    return frozenset(case.id for case in load_cases())


def committed(result: Check, tmp_path: Path) -> list[VectorCase]:
    """Paste the rendered counterexample into a vector file; load it back.

    Checks what committing it needs: the file validates against the
    schema, the loader accepts it, its id is new, and its rules exist and
    hold in each of its revisions.
    """
    assert counterexample(result) is not None
    family = method_of(result).removeprefix("codec/")
    first = counterexample(result)["revisions"][0]
    text = (
        f'{{"$schema": "{SCHEMA_REF}", "family": "{family}",'
        f' "method": "{FAMILIES[family]}", "cases": [{render_vector(result)}]}}'
    )
    errors = list(vector_file_validator().iter_errors(json.loads(text)))
    assert errors == []
    path = tmp_path / result.id.replace("/", "-") / first / f"{family}.json"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    cases = load_file(path)
    assert [case.id for case in cases] == [counterexample(result)["id"]]
    assert cases[0].id not in committed_ids()
    assert all(
        RULES[rule].applies_to(revision)
        for case in cases
        for rule in case.rules
        for revision in case.revisions
    )
    return cases


def run_cases(
    connect: Callable[[], Connection], cases: list[VectorCase]
) -> set[Outcome]:
    selected = [(revision, case) for case in cases for revision in case.revisions]
    return {result.outcome for result in run_vectors(connect, cases=selected).results}


# ---------------------------------------------------------------- the reference


@pytest.mark.spec("DELTA-2", "DELTA-3", "FOLD-1", "WRITER-3", "EQ-1", "HDR-4")
def test_the_in_process_reference_agrees_with_itself_on_every_property() -> None:
    results = run_properties(DirectConnection)
    assert len(results) == len(PROPERTIES) * len(Revision)
    assert {result.outcome for result in results} == {Outcome.PASS}
    assert all(examples_of(result) == DEFAULT_EXAMPLES for result in results)
    assert all(counterexample(result) is None for result in results)


@pytest.mark.slow
@pytest.mark.spec("DELTA-2", "DELTA-3", "FOLD-3", "WRITER-4", "EQ-2", "HDR-5")
def test_the_reference_adapter_process_passes_every_property() -> None:
    results = run_properties(
        lambda: StdioConnection(
            [sys.executable, "-m", "reqfold.reference.adapter"], timeout=10
        )
    )
    assert len(results) == len(PROPERTIES) * len(Revision)
    assert {result.outcome for result in results} == {Outcome.PASS}


@pytest.mark.spec("HDR-1", "CONFIG-2", "TOOLS-2", "MSGS-1", "SNAP-1", "LOG-2")
@pytest.mark.parametrize(
    ("prop", "revision"),
    [(prop, revision) for prop in PROPERTIES for revision in prop.revisions],
    ids=lambda value: value.family if isinstance(value, CodecProperty) else str(value),
)
def test_the_core_profile_generates_only_inputs_the_reference_accepts(
    prop: CodecProperty, revision: Revision
) -> None:
    reference = DirectConnection()

    @settings(
        max_examples=scaled_examples(30),
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(prop.params(revision))  # built once, not per example
    def check(params: JsonObject) -> None:
        response = reference.request(
            prop.method, {**params, "revision": revision.value}
        )
        assert "result" in response, response

    check()


# ---------------------------------------------------------------- the results


@pytest.mark.spec("JSON-3")
def test_each_property_names_its_method_and_only_rules_that_hold_in_the_revision() -> (
    None
):
    assert [prop.family for prop in PROPERTIES] == list(FAMILIES)
    for prop in PROPERTIES:
        assert prop.method == FAMILIES[prop.family]
        for revision in prop.revisions:
            rules = prop.rules_for(revision)
            assert "JSON-3" in rules
            assert all(RULES[rule].applies_to(revision) for rule in rules)
    assert "DELTA-5" not in the_property("diff").rules_for(Revision.HEADER_EVENTS)
    assert "DELTA-5" in the_property("diff").rules_for(Revision.SESSION_PREFIX)


def test_result_ids_are_stable_names_of_property_and_revision() -> None:
    results = run_properties(DirectConnection, [Revision.SESSION_PREFIX], examples=2)
    assert [result.id for result in results] == [
        f"property/{family}/session-prefix" for family in FAMILIES
    ]
    dumped = results[0].dump()
    assert dumped["id"] == "property/canonical/session-prefix"
    assert dumped["part"] == "properties"
    assert dumped["outcome"] == "pass"
    assert set(dumped["detail"]) == {"method", "examples", "vector"}
    assert method_of(results[0]) == "codec/canonical"
    with pytest.raises(ValueError, match="no counterexample"):
        render_vector(results[0])


def test_revisions_the_implementation_does_not_declare_are_skipped() -> None:
    results = run_properties(
        lambda: Patched({}, revisions=["header-events"]), examples=3
    )
    by_revision = {
        revision.value: {r.outcome for r in results if r.revision == revision.value}
        for revision in Revision
    }
    assert by_revision == {
        "header-events": {Outcome.PASS},
        "request-messages": {Outcome.SKIP},
        "session-prefix": {Outcome.SKIP},
    }
    assert all(examples_of(r) == 0 for r in results if r.outcome is Outcome.SKIP)


# ---------------------------------------------------------------- failures


@pytest.mark.spec("WRITER-4", "DELTA-6")
def test_a_writer_that_never_falls_back_fails_with_a_shrunk_committable_vector(
    tmp_path: Path,
) -> None:
    def connect() -> Connection:
        return Patched({"codec/record": never_falls_back})

    results = run_properties(connect, properties=[the_property("record")])
    assert {result.outcome for result in results} == {Outcome.FAIL}
    for result in results:
        assert counterexample(result) is not None
        assert counterexample(result)["level"] == "MUST"
        assert counterexample(result)["id"].startswith("record-generated-")
        assert "WRITER-4" in counterexample(result)["rules"]
        assert counterexample(result)["expect"]["result"]["event"]["data"][
            "reason"
        ] == ("fallback")
        tools = counterexample(result)["params"]["header"]["tools"]
        assert len(tools) <= 3, "the counterexample is shrunk"
        cases = committed(result, tmp_path)
        assert run_cases(DirectConnection, cases) == {Outcome.PASS}
        assert run_cases(connect, cases) == {Outcome.FAIL}


@pytest.mark.spec("WRITER-4")
def test_the_same_implementation_gets_the_same_report_every_time() -> None:
    def connect() -> Connection:
        return Patched({"codec/record": never_falls_back})

    def report() -> list[Any]:
        results = run_properties(
            connect, [Revision.HEADER_EVENTS], properties=PROPERTIES[4:]
        )
        return [result.dump() for result in results]

    assert report() == report()


def test_the_search_draws_no_constants_from_whatever_local_modules_are_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hypothesis now and then draws a constant from the source of the local
    modules the process has loaded, so the inputs moved with what was
    imported (a pytest session's collection, a checkout instead of a wheel).
    The properties hide those constants while they search."""
    from hypothesis.internal.conjecture import providers

    (tmp_path / "many_constants.py").write_text(
        "NAMES = ("
        + ", ".join(f'"tool_{n}_schema"' for n in range(50))
        + ")\nNUMBERS = (7919, 104729, 65537)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "many_constants", raising=False)
    __import__("many_constants")
    assert "tool_7_schema" in providers._get_local_constants().strings

    seen: list[int] = []
    real = providers.HypothesisProvider._maybe_draw_constant

    def spying(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(providers._get_local_constants()))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(providers.HypothesisProvider, "_maybe_draw_constant", spying)
    run_properties(
        DirectConnection, [Revision.SESSION_PREFIX], properties=PROPERTIES[:2]
    )
    assert seen
    assert set(seen) == {0}
    assert "tool_7_schema" in providers._get_local_constants().strings


@pytest.mark.parametrize(
    "missing", ["CONSTANTS_CACHE", "Constants", "_get_local_constants"]
)
def test_a_hypothesis_lacking_a_part_the_hiding_touches_is_left_as_it_is(
    missing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hypothesis.internal.conjecture import providers

    from reqfold.conformance.codec.local_constants import without_local_constants

    monkeypatch.setattr(providers, missing, None)
    seam = providers._get_local_constants
    with without_local_constants():
        assert providers._get_local_constants is seam
    assert providers._get_local_constants is seam


@pytest.mark.spec("JSON-3", "HDR-5")
def test_member_order_alone_is_a_warning_never_a_failure(tmp_path: Path) -> None:
    def connect() -> Connection:
        return Patched({method: unordered(method) for method in FAMILIES.values()})

    results = run_properties(connect, [Revision.SESSION_PREFIX])
    assert {result.outcome for result in results} <= {Outcome.PASS, Outcome.WARN}
    warned = [result for result in results if result.outcome is Outcome.WARN]
    assert warned
    for result in warned:
        assert counterexample(result) is not None
        assert counterexample(result)["level"] == "SHOULD"
        assert counterexample(result)["rules"] == ["JSON-3"]
        cases = committed(result, tmp_path)
        assert run_cases(DirectConnection, cases) == {Outcome.PASS}
        assert run_cases(connect, cases) == {Outcome.WARN}


@pytest.mark.spec("JSON-3", "EQ-1")
def test_an_answer_that_depends_on_member_order_only_warns_when_order_is_ignored() -> (
    None
):
    def connect() -> Connection:
        return Patched({"codec/equals": unordered("codec/equals")})

    results = run_properties(
        connect, [Revision.HEADER_EVENTS], properties=[the_property("equals")]
    )
    [result] = results
    assert result.outcome is Outcome.WARN
    assert "depends on member order" in result.message
    assert counterexample(result) is not None
    assert counterexample(result)["expect"] == {"result": {"equal": False}}


def test_a_crash_mid_property_is_an_error_and_the_next_one_gets_a_new_adapter() -> None:
    started: list[Patched] = []

    def crash(params: JsonObject) -> JsonObject:
        raise AdapterCrashed("the adapter exited while answering codec/fold")

    def connect() -> Connection:
        started.append(Patched({"codec/fold": crash}))
        return started[-1]

    results = run_properties(connect, [Revision.REQUEST_MESSAGES], examples=5)
    assert outcomes(results) == {
        f"property/{family}/request-messages": "error" if family == "fold" else "pass"
        for family in FAMILIES
    }
    [error] = [result for result in results if result.outcome is Outcome.ERROR]
    assert examples_of(error) == 1
    assert "crash: " in error.message
    assert '"events"' in error.message, "the message shows the input"
    assert len(started) == 2


def test_an_adapter_that_does_not_start_is_an_error_for_every_property() -> None:
    def connect() -> Connection:
        raise AdapterStartupFailed("cannot start 'nothing'")

    results = run_properties(connect, [Revision.HEADER_EVENTS])
    assert {result.outcome for result in results} == {Outcome.ERROR}
    assert all("cannot start 'nothing'" in result.message for result in results)


# ---------------------------------------------------------------- known-bad adapters


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "family", "rule"),
    [
        pytest.param(
            "drops_tool_removals", "apply", "TOOLS-4", marks=pytest.mark.spec("TOOLS-4")
        ),
        pytest.param(
            "writer_never_falls_back",
            "record",
            "WRITER-4",
            marks=pytest.mark.spec("WRITER-4"),
        ),
        pytest.param(
            "anchor_config_equality", "equals", "EQ-2", marks=pytest.mark.spec("EQ-2")
        ),
        pytest.param(
            "anchor_config_equality", "diff", "EQ-2", marks=pytest.mark.spec("EQ-2")
        ),
        pytest.param(
            "keeps_empty_fields", "canonical", "HDR-4", marks=pytest.mark.spec("HDR-4")
        ),
        pytest.param(
            "bool_is_int", "equals", "JSON-2", marks=pytest.mark.spec("JSON-2")
        ),
    ],
)
def test_a_known_bad_adapter_fails_with_a_vector_the_reference_passes(
    name: str, family: str, rule: str, tmp_path: Path
) -> None:
    connect = bad_adapter(name)
    results = run_properties(connect, properties=[the_property(family)])
    assert {result.outcome for result in results} <= {Outcome.PASS, Outcome.FAIL}
    failed = [result for result in results if result.outcome is Outcome.FAIL]
    assert failed
    cases: list[VectorCase] = []
    for result in failed:
        assert counterexample(result) is not None
        assert rule in counterexample(result)["rules"]
        cases += committed(result, tmp_path)
    # every counterexample in one run: one adapter process, not one each
    assert run_cases(DirectConnection, cases) == {Outcome.PASS}
    assert run_cases(connect, cases) == {Outcome.FAIL}


@pytest.mark.slow
@pytest.mark.spec("JSON-3", "HDR-5")
def test_the_unordered_maps_adapter_only_draws_warnings(tmp_path: Path) -> None:
    connect = bad_adapter("unordered_maps")
    # One revision: the others differ in header fields, not in how member
    # order is judged (the in-process test above covers that per revision).
    results = run_properties(connect, [Revision.REQUEST_MESSAGES])
    # Which properties pass outright depends on whether 40 examples meet an
    # answer whose member order matters; none may fail or error.
    outcomes = {result.outcome for result in results}
    assert outcomes <= {Outcome.PASS, Outcome.WARN}
    assert Outcome.WARN in outcomes
    warned = [result for result in results if result.outcome is Outcome.WARN]
    cases = [case for result in warned[:3] for case in committed(result, tmp_path)]
    assert run_cases(DirectConnection, cases) == {Outcome.PASS}
    assert run_cases(connect, cases) == {Outcome.WARN}


@pytest.mark.slow
def test_the_crashing_adapter_is_an_error_on_fold_and_passes_the_rest() -> None:
    results = run_properties(bad_adapter("crashes_on_fold"))
    for result in results:
        if method_of(result) == "codec/fold":
            assert result.outcome is Outcome.ERROR
            assert "crash: " in result.message
            assert "exit status 3" in result.message
            assert counterexample(result) is None
        else:
            assert result.outcome is Outcome.PASS, result.message


@pytest.mark.slow
@pytest.mark.spec("DELTA-2")
def test_an_internal_failure_is_an_error_not_a_failure() -> None:
    results = run_properties(
        bad_adapter("fails_internally_on_diff"), properties=[the_property("diff")]
    )
    assert {result.outcome for result in results} == {Outcome.ERROR}
    assert all("-32603" in result.message for result in results)
