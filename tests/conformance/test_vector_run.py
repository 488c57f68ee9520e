"""`reqfold vectors`: the reference passes, known-bad implementations are caught.

Each adapter in ``bad_adapters/`` embodies one realistic bug or breach and
is run as a real child process, exactly as an implementation in another
language would be. The suite must name the broken rules, keep errors
(broken adapters) apart from failures (wrong answers), and survive
crashes, hangs and garbage. ``reqfold vectors`` itself runs in the
test's process (its adapter is a child all the same; stdout must encode as
UTF-8, as a process's would), except where what is shown is a ``reqfold``
process's: a conformant run (exit 0), a failing JSON report (exit 1) and
bad arguments (exit 2) go through a child ``reqfold``. Tests that read the
same run share it (module fixtures: the in-process reference's run, and
the default run of a known-bad adapter); none changes what it reads.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import commands
import pytest
from cli_in_process import reqfold_here
from processes import process_gone, wait_until

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.adapters.inprocess import DirectConnection
from reqfold.conformance.codec import cli as vectors_cli
from reqfold.conformance.codec.cases import CORE, STRICT
from reqfold.conformance.codec.judging import Verdict, judge_response
from reqfold.conformance.codec.loading import iter_cases
from reqfold.conformance.codec.runner import VectorReport, profile_of, run_vectors
from reqfold.conformance.errors import (
    AdapterProtocolError,
    AdapterStartupFailed,
    AdapterTimeout,
)
from reqfold.conformance.outcomes import Outcome

BAD = Path(__file__).parent / "bad_adapters"


run_cli = partial(commands.reqfold, "vectors")
"""``reqfold vectors ARGS`` as a child process: exit status, stdout, stderr."""

vectors_here = partial(reqfold_here, "vectors")
"""``reqfold vectors ARGS`` in this process (the adapter is still a child)."""


TIMEOUT = 2.0
"""The --timeout of a run whose adapter answers what it is asked (seconds)."""
HUNG = 1.0
"""The --timeout of a run whose adapter hangs once, which the test waits out
(seconds). It also bounds each start of the adapter, about 0.3 s on a
loaded two-core machine (``test_adapter_teardown`` gives it 0.5 s)."""
HANGS = frozenset({"hangs_after_initialize", "misbehaves_once", "stops_reading"})
"""The known-bad adapters that leave a request unanswered."""


def run_bad(
    name: str, tmp_path: Path, *extra: str, timeout: float = TIMEOUT
) -> tuple[int, dict[str, Any]]:
    env = {"REQFOLD_BAD_STATE": str(tmp_path)}
    impl = f"{sys.executable} {BAD / (name + '.py')}"
    code, out, err = vectors_here(
        *("--impl", impl, "--timeout", f"{timeout:g}", "--format", "json", *extra),
        env=env,
    )
    assert "Traceback" not in err
    return code, json.loads(out)


def failing_rules(report: dict[str, Any]) -> set[str]:
    return {
        rule
        for result in report["results"]
        if result["outcome"] == "fail"
        for rule in result["rules"]
    }


@pytest.fixture(scope="module")
def reference_report() -> VectorReport:
    """The in-process reference run over every vector, once per module (per
    xdist worker): the tests below read it, none changes it."""
    return run_vectors(DirectConnection)


@pytest.fixture(scope="module")
def default_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str], tuple[int, dict[str, Any]]]:
    """`run_bad` of a known-bad adapter with no options, made once per
    module (per xdist worker) and adapter: tests that read the same run
    share it and never change it."""
    runs: dict[str, tuple[int, dict[str, Any]]] = {}

    def run(name: str) -> tuple[int, dict[str, Any]]:
        if name not in runs:
            runs[name] = run_bad(name, tmp_path_factory.mktemp(name))
        return runs[name]

    return run


def test_the_in_process_reference_passes_every_vector_of_every_revision(
    reference_report: VectorReport,
) -> None:
    report = reference_report
    counts = report.counts()
    assert counts == {
        "pass": len(list(iter_cases())),
        "warn": 0,
        "fail": 0,
        "error": 0,
        "skip": 0,
    }
    assert report.exit_status() == 0


def test_revisions_the_implementation_does_not_declare_are_skipped_not_failed() -> None:
    class OldImplementation(DirectConnection):
        def initialize(self) -> dict[str, Any]:
            return {**super().initialize(), "revisions": ["header-events"]}

    report = run_vectors(OldImplementation)
    outcomes = {(r.revision, r.outcome) for r in report.results}
    assert ("request-messages", Outcome.SKIP) in outcomes
    assert ("header-events", Outcome.PASS) in outcomes
    assert {o for rev, o in outcomes if rev == "header-events"} == {Outcome.PASS}
    assert report.exit_status() == 0


@pytest.mark.slow
def test_the_reference_adapter_process_is_conformant_and_says_so() -> None:
    code, out, err = run_cli()
    assert code == 0, err
    assert "Verdict: CONFORMANT" in out
    assert f"Total: {len(list(iter_cases()))} pass, 0 warn, 0 fail, 0 error" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "broken_rules"),
    [
        pytest.param(
            "anchor_config_equality", {"EQ-2"}, marks=pytest.mark.spec("EQ-2")
        ),
        pytest.param("clamps_system_arm", {"SYS-5"}, marks=pytest.mark.spec("SYS-5")),
        pytest.param(
            "drops_tool_removals", {"TOOLS-4"}, marks=pytest.mark.spec("TOOLS-4")
        ),
        pytest.param(
            "writer_never_falls_back", {"WRITER-4"}, marks=pytest.mark.spec("WRITER-4")
        ),
        pytest.param("keeps_empty_fields", {"HDR-4"}, marks=pytest.mark.spec("HDR-4")),
        pytest.param("bool_is_int", {"JSON-2"}, marks=pytest.mark.spec("JSON-2")),
    ],
)
def test_a_known_bad_implementation_fails_and_the_broken_rule_is_named(
    name: str,
    broken_rules: set[str],
    default_run: Callable[[str], tuple[int, dict[str, Any]]],
) -> None:
    code, report = default_run(name)
    assert code == 1
    assert broken_rules <= failing_rules(report)
    assert report["counts"]["error"] == 0
    assert report["counts"]["pass"] > 0


@pytest.mark.slow
@pytest.mark.spec("HDR-4")
def test_a_reqfold_process_writes_a_failing_json_report_whole_and_exits_1(
    tmp_path: Path,
) -> None:
    impl = f"{sys.executable} {BAD / 'keeps_empty_fields.py'}"
    code, out, err = run_cli(
        *("--impl", impl, "--revision", "session-prefix", "--format", "json"),
        env={**os.environ, "REQFOLD_BAD_STATE": str(tmp_path)},
    )
    assert code == 1, err
    assert "Traceback" not in err
    assert "HDR-4" in failing_rules(json.loads(out))


@pytest.mark.slow
@pytest.mark.spec("JSON-3", "HDR-5")
def test_unordered_maps_only_draw_should_warnings_unless_strict(tmp_path: Path) -> None:
    code, report = run_bad("unordered_maps", tmp_path)
    assert code == 0
    assert report["counts"]["fail"] == 0
    assert report["counts"]["warn"] > 0
    strict_code, _ = run_bad("unordered_maps", tmp_path, "--strict")
    assert strict_code == 1


@pytest.mark.slow
@pytest.mark.spec("JSON-3")
def test_integer_like_keys_moved_first_draw_warnings_on_exactly_those_vectors(
    tmp_path: Path,
) -> None:
    code, report = run_bad("hoists_integer_keys", tmp_path)
    assert code == 0
    assert report["counts"]["fail"] == 0
    warned = {r["id"] for r in report["results"] if r["outcome"] == "warn"}
    assert warned
    assert all("integer-like" in case_id for case_id in warned), warned
    strict_code, _ = run_bad("hoists_integer_keys", tmp_path, "--strict")
    assert strict_code == 1


@pytest.mark.slow
def test_every_vector_fails_on_an_implementation_that_answers_everything_wrongly(
    tmp_path: Path,
) -> None:
    code, report = run_bad("contrarian", tmp_path)
    assert code == 1
    by_level = {
        level: {r["outcome"] for r in report["results"] if r["level"] == level}
        for level in ("MUST", "SHOULD")
    }
    assert by_level == {"MUST": {"fail"}, "SHOULD": {"warn"}}


@pytest.mark.slow
def test_a_crashing_adapter_is_an_error_per_case_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    # One revision: each fold case costs a restart of the crashed adapter.
    code, report = run_bad("crashes_on_fold", tmp_path, "--revision", "session-prefix")
    assert code == 3
    errors = [r for r in report["results"] if r["outcome"] == "error"]
    assert errors
    assert {r["method"] for r in errors} == {"codec/fold"}
    assert all(
        "crash: " in r["message"] and "exit status 3" in r["message"] for r in errors
    )
    others = {r["outcome"] for r in report["results"] if r["method"] != "codec/fold"}
    assert others == {"pass"}


@pytest.mark.slow
def test_a_hang_garbage_and_a_wrong_id_each_cost_one_case_only(tmp_path: Path) -> None:
    code, report = run_bad("misbehaves_once", tmp_path, timeout=HUNG)
    assert code == 3
    messages = [r["message"] for r in report["results"] if r["outcome"] == "error"]
    assert len(messages) == 3
    assert "timeout: " in messages[0]
    assert "not a JSON line" in messages[1]
    assert "does not echo request id" in messages[2]
    assert report["counts"]["fail"] == 0


@pytest.mark.slow
def test_an_adapter_that_refuses_the_protocol_version_gives_no_verdict(
    tmp_path: Path,
) -> None:
    code, report = run_bad("refuses_version", tmp_path)
    assert code == 3
    assert "refused protocol version" in report["startupError"]
    assert "version 2" in report["startupError"]
    assert report["results"] == []


@pytest.mark.slow
def test_stderr_output_is_never_a_failure(tmp_path: Path) -> None:
    code, report = run_bad("noisy_stderr", tmp_path)
    assert code == 0
    assert report["counts"]["fail"] == report["counts"]["error"] == 0


@pytest.mark.slow
def test_a_missing_command_and_a_bad_revision_are_reported_without_a_traceback() -> (
    None
):
    code, _, err = run_cli("--impl", "/nonexistent/adapter")
    assert code == 3
    assert "cannot start" in err
    assert "Traceback" not in err
    code, _, err = run_cli("--revision", "r9")
    assert code == 2
    assert "unknown revision 'r9'" in err


# ------------------------------------------------------------ profiles

VALIDATION_ONLY = {"clamps_system_arm", "validates_nothing"}
"""Known-bad adapters whose only defect is accepting input the strict
profile rejects: right on everything a conforming writer produces."""

NOT_A_CONTRACT_DEFECT = {
    "noisy_stderr",
    "floods_stderr",
    "spawns_grandchild",
    "declares_session_prefix_only",
}
"""Correct codecs in a hostile process (or declaring less): they show the
suite survives them, and must pass."""

SHOULD_ONLY = {"unordered_maps", "hoists_integer_keys", "names_the_wrong_rule"}
"""Wrong only where the spec or the protocol says SHOULD: warnings, no failure."""


def gallery() -> list[str]:
    return sorted(path.stem for path in BAD.glob("*.py") if path.stem[0] != "_")


@pytest.mark.slow
@pytest.mark.spec("SYS-5", "TOOLS-5", "HDR-2", "JSON-1")
def test_a_lenient_adapter_passes_core_and_fails_strict(tmp_path: Path) -> None:
    code, report = run_bad("validates_nothing", tmp_path)
    assert code == 0, report["counts"]
    assert report["profiles"] == {"claimed": ["core"], "judged": ["core"]}
    assert report["counts"]["pass"] == len(
        [c for _, c in iter_cases() if c.profile == CORE]
    )
    strict = report["profileCounts"]["strict"]
    assert strict["fail"] > 250
    code, report = run_bad("validates_nothing", tmp_path, "--profile", "strict")
    assert code == 1
    assert {"SYS-5", "TOOLS-5", "HDR-2", "DELTA-1"} <= failing_rules(report)
    assert {r["profile"] for r in report["results"] if r["outcome"] == "fail"} == {
        STRICT
    }


@pytest.mark.slow
def test_the_strict_results_get_their_own_line_and_stay_out_of_a_core_verdict(
    tmp_path: Path,
) -> None:
    impl = f"{sys.executable} {BAD / 'validates_nothing.py'}"
    code, out, err = vectors_here("--impl", impl, "--timeout", "2")
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("strict input validation")]
    strict_runs = len([c for _, c in iter_cases() if c.profile == STRICT])
    found = re.fullmatch(
        r"strict input validation: (\d+) of (\d+) pass \((\d+) fail.*\),"
        r" not claimed \(not in the verdict\)",
        line,
    )
    assert found, line
    right, ran, failed = map(int, found.groups())
    assert ran == strict_runs
    assert 0 < right < ran
    assert failed > 0
    assert "FAIL" not in out  # strict failures are summed up, not listed
    code, out, _ = vectors_here("--impl", impl, "--timeout", "2", "--show", "all")
    assert "(strict)" in out


@pytest.mark.slow
def test_an_implementation_that_claims_strict_is_judged_on_it(
    tmp_path: Path, default_run: Callable[[str], tuple[int, dict[str, Any]]]
) -> None:
    # clamps_system_arm serves the reference's identity, which claims strict.
    code, report = default_run("clamps_system_arm")
    assert code == 1
    assert report["profiles"]["judged"] == ["core", "strict"]
    code, report = run_bad("clamps_system_arm", tmp_path, "--profile", "core")
    assert code == 0
    assert report["profileCounts"]["strict"]["fail"] > 0


class _Caught(Exception):
    """Raised by the result callback at the first judged failure or error."""


def verdict_of(name: str, profile: str) -> int:
    """The exit status `name` gets under `profile`: 1 or 3 as soon as one
    judged case fails or errors (the rest would not change that), else the
    whole run's."""

    def stop_at_first_problem(result: Any) -> None:
        if profile_of(result) in judged and result.outcome is Outcome.FAIL:
            raise _Caught(1)
        if profile_of(result) in judged and result.outcome is Outcome.ERROR:
            raise _Caught(3)

    judged = {CORE} if profile == CORE else {CORE, STRICT}
    try:
        report = run_vectors(
            lambda: connect_bad(name, timeout=HUNG if name in HANGS else TIMEOUT),
            profile=profile,
            on_result=stop_at_first_problem,
        )
    except _Caught as caught:
        status: int = caught.args[0]
        return status
    return report.exit_status()


@pytest.mark.slow
@pytest.mark.parametrize("name", gallery())
def test_every_known_bad_adapter_is_caught_by_core_unless_its_defect_is_validation(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQFOLD_BAD_STATE", str(tmp_path))
    code = verdict_of(name, CORE)
    if name in VALIDATION_ONLY:
        assert code == 0
        assert verdict_of(name, STRICT) == 1
    elif name in NOT_A_CONTRACT_DEFECT | SHOULD_ONLY:
        assert code == 0
    else:
        assert code in (1, 3), f"{name} is not caught by the core profile"


def test_a_revision_filter_that_leaves_nothing_declared_exits_2() -> None:
    impl = f"{sys.executable} {BAD / 'declares_session_prefix_only.py'}"
    code, _, err = vectors_here("--impl", impl, "--revision", "header-events")
    assert code == 2
    assert "does not declare header-events (it declares session-prefix)" in err
    assert "Traceback" not in err
    code, _, _ = vectors_here("--impl", impl, "--revision", "session-prefix")
    assert code == 0


@pytest.mark.slow
def test_reqfold_run_counts_strict_only_when_judged_and_always_prints_its_line() -> (
    None
):
    def run(*extra: str) -> tuple[int, str]:
        code, out, _ = reqfold_here(
            "run", "--impl", "reference", "--only", "vectors", *extra
        )
        return code, out

    core = len([c for _, c in iter_cases() if c.profile == CORE])
    everything = len(list(iter_cases()))
    code, out = run("--profile", "core")
    assert code == 0
    assert f"vectors     {core} checks" in out
    assert "note: strict input validation: " in out
    assert "left out of the verdict as --profile core asks" in out
    code, out = run()
    assert code == 0
    assert f"vectors     {everything} checks" in out
    assert f"strict input validation: {everything - core} of" in out


def test_the_reference_claims_strict_and_passes_both_profiles(
    reference_report: VectorReport,
) -> None:
    report = reference_report
    assert report.judged == {CORE, STRICT}
    for profile in (CORE, STRICT):
        counts = report.counts(profile=profile)
        assert counts["pass"] > 0
        assert counts["fail"] == counts["error"] == counts["warn"] == 0


def test_the_verdict_leaves_out_a_profile_that_is_not_judged() -> None:
    class LenientClaim(DirectConnection):
        def initialize(self) -> dict[str, Any]:
            return {**super().initialize(), "capabilities": ["codec"]}

        def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            # Every rejection but the design's own answered wrongly: a result.
            response = super().request(method, params)
            error = response.get("error")
            if error and error["data"]["kind"] != "delta-before-snapshot":
                return {"result": {}}
            return response

    report = run_vectors(LenientClaim)
    assert report.judged == {CORE}
    assert report.exit_status() == 0
    assert report.counts(profile=STRICT)["fail"] > 0
    assert "not claimed (not in the verdict)" in report.profile_line()
    chosen = run_vectors(LenientClaim, profile=STRICT)
    assert chosen.exit_status() == 1
    assert "judged as --profile strict asks" in chosen.profile_line()


# ------------------------------------------------------------ the suite's own limits


def connect_bad(name: str, *args: str, timeout: float) -> StdioConnection:
    return StdioConnection(
        [sys.executable, str(BAD / (name + ".py")), *args], timeout=timeout
    )


EQUAL_PARAMS = {"a": {"config": {"model": "m"}}, "b": {"config": {"model": "m"}}}


@pytest.mark.slow
def test_a_request_the_adapter_stops_reading_times_out_instead_of_blocking() -> None:
    connection = connect_bad("stops_reading", timeout=TIMEOUT)
    try:
        connection.initialize()
        # From here on the adapter reads nothing: only the wait is timed.
        connection.timeout = 0.25
        bigger_than_a_pipe = {"header": {"config": {"model": "x" * 4_000_000}}}
        started = time.monotonic()
        with pytest.raises(AdapterTimeout, match="stdin"):
            connection.request("codec/canonical", bigger_than_a_pipe)
        assert time.monotonic() - started < 5
        assert not connection.alive
    finally:
        connection.close()


@pytest.mark.slow
def test_a_hung_adapter_is_killed_with_every_process_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQFOLD_BAD_STATE", str(tmp_path))
    started = time.monotonic()
    connection = connect_bad("spawns_grandchild", "--hang", timeout=1.0)
    with pytest.raises(AdapterStartupFailed, match="no answer to initialize"):
        connection.initialize()
    connection.close()
    assert time.monotonic() - started < 5
    assert connection.returncode is not None  # reaped: no zombie
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    assert wait_until(lambda: process_gone(grandchild), 5)


@pytest.mark.slow
def test_processes_an_adapter_leaves_behind_are_killed_when_the_run_ends(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    code, report = run_bad("spawns_grandchild", tmp_path)
    assert time.monotonic() - started < 15
    assert code == 0
    assert report["counts"]["error"] == 0
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    assert wait_until(lambda: process_gone(grandchild), 5)


@pytest.mark.slow
def test_json_that_python_accepts_but_the_protocol_forbids_costs_one_case_each(
    tmp_path: Path,
) -> None:
    code, report = run_bad("answers_loose_json", tmp_path)
    assert code == 3
    messages = [r["message"] for r in report["results"] if r["outcome"] == "error"]
    assert len(messages) == 3
    assert all("protocol error: " in message for message in messages)
    assert "NaN" in messages[0]
    assert "repeats the key 'header'" in messages[1]
    assert "lone surrogate" in messages[2]
    assert report["counts"]["fail"] == 0


@pytest.mark.slow
def test_an_id_of_true_does_not_echo_request_id_1(tmp_path: Path) -> None:
    code, report = run_bad("echoes_id_as_true", tmp_path)
    assert code == 3
    assert "does not echo request id 1" in report["startupError"]
    assert report["results"] == []


@pytest.mark.slow
def test_a_flood_of_unsolicited_stdout_lines_is_a_protocol_error() -> None:
    connection = connect_bad("floods_stdout", timeout=5.0)
    try:
        connection.initialize()
        assert wait_until(lambda: "flood done" in connection.stderr_tail)
        with pytest.raises(AdapterProtocolError, match="unsolicited"):
            connection.request("codec/equals", EQUAL_PARAMS)
    finally:
        connection.close()


@pytest.mark.slow
def test_a_huge_stderr_line_is_truncated_and_only_a_bounded_tail_is_kept() -> None:
    connection = connect_bad("floods_stderr", timeout=5.0)
    try:
        connection.initialize()
        assert connection.request("codec/equals", EQUAL_PARAMS)["result"] == {
            "equal": True
        }
    finally:
        connection.close()
    tail = connection.stderr_tail
    assert tail.endswith("after the big line")
    assert "[truncated]" in tail
    assert len(tail) < 100_000


# ---------------------------------------------------------- the runner never crashes


def a_case(method: str, *, rejection: bool) -> Any:
    return next(
        case
        for _, case in iter_cases()
        if case.method == method and case.expects_error == rejection
    )


def test_judging_a_result_that_is_not_json_never_raises() -> None:
    case = a_case("codec/canonical", rejection=False)
    for result in ({"header": float("nan")}, {"header": {1, 2}}, object()):
        judgement = judge_response(case, {"result": result})
        assert judgement.verdict is Verdict.FAIL
        assert "result differs" in judgement.reason
    rejection = a_case("codec/canonical", rejection=True)
    judgement = judge_response(rejection, {"error": {"code": float("nan")}})
    assert judgement.verdict is Verdict.FAIL
    assert "expected a rejection" in judgement.reason


def test_an_unexpected_exception_on_a_case_is_an_error_and_the_run_goes_on() -> None:
    class Buggy(DirectConnection):
        calls = 0

        def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            Buggy.calls += 1
            if Buggy.calls == 3:
                raise RuntimeError("a bug in the connection")
            return super().request(method, params)

    report = run_vectors(Buggy)
    errors = [r for r in report.results if r.outcome is Outcome.ERROR]
    assert [r.message for r in errors] == ["RuntimeError: a bug in the connection"]
    assert report.counts()["pass"] == len(report.results) - 1
    assert report.exit_status() == 3


def test_the_connection_is_closed_even_when_the_run_is_interrupted() -> None:
    closed: list[bool] = []

    class Recording(DirectConnection):
        def close(self) -> None:
            closed.append(True)

    def interrupt(_result: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_vectors(Recording, on_result=interrupt)
    assert closed == [True]


def test_an_unexpected_exception_in_the_runner_exits_3_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise ValueError("something the suite did not expect")

    monkeypatch.setattr(vectors_cli, "run_vectors", broken)
    parser = argparse.ArgumentParser()
    vectors_cli.add_arguments(parser)
    code = vectors_cli.run(parser.parse_args(["--impl", "reference"]))
    assert code == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "internal error" in err
    assert "ValueError: something the suite did not expect" in err


def test_a_rejection_of_another_kind_passes_and_the_message_names_both_kinds() -> None:
    class Misnamed(DirectConnection):
        def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            response = super().request(method, params)
            if "error" in response:
                response["error"]["data"]["kind"] = "something-else"
            return response

    report = run_vectors(Misnamed)
    assert report.exit_status() == 0
    rejections = [
        r for r in report.results if r.detail["errorKind"] == "something-else"
    ]
    assert len(rejections) == len([c for _, c in iter_cases() if c.expects_error])
    assert all(r.outcome is Outcome.PASS for r in rejections)
    assert all("expects kind" in r.message for r in rejections)
    untouched = [r for r in report.results if r not in rejections]
    assert all(r.message == "" for r in untouched)


def rejection_runs() -> list[tuple[str, str]]:
    return [(r.value, c.id) for r, c in iter_cases() if c.expects_error]


@pytest.mark.slow
def test_an_adapter_that_names_the_wrong_rule_gets_warnings_and_fails_only_strict(
    tmp_path: Path,
) -> None:
    code, report = run_bad("names_the_wrong_rule", tmp_path)
    assert code == 0
    assert report["counts"]["fail"] == report["counts"]["error"] == 0
    warned = [r for r in report["results"] if r["outcome"] == "warn"]
    assert sorted((r["revision"], r["id"]) for r in warned) == sorted(rejection_runs())
    cases = {case.id: case for _, case in iter_cases()}
    method_rules = {"codec/fold": "FOLD-1", "codec/apply": "DELTA-3"}
    for result in warned:
        case = cases[result["id"]]
        assert result["errorCode"] == -32000
        assert result["errorKind"] == case.expect["error"]["kind"]
        assert result["errorRule"] not in case.expected_rules
        assert result["errorSeq"] is None
        if result["method"] in method_rules:
            assert result["errorRule"] == method_rules[result["method"]]
        assert result["message"].startswith("(SHOULD) rejected as required")
        assert "where it must name" in result["message"]
    strict_code, _ = run_bad("names_the_wrong_rule", tmp_path, "--strict")
    assert strict_code == 1


@pytest.mark.spec("FOLD-2")
def test_naming_another_seq_fails_fold_2_and_is_a_warning_elsewhere() -> None:
    class OffByOne(DirectConnection):
        def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            response = super().request(method, params)
            data = response.get("error", {}).get("data", {})
            if "seq" in data:
                data["seq"] += 1
            return response

    report = run_vectors(OffByOne)
    assert report.exit_status() == 1
    failed = {r.name for r in report.results if r.outcome is Outcome.FAIL}
    fold_2 = {c.id for _, c in iter_cases() if "FOLD-2" in c.rules and c.expects_error}
    assert failed == fold_2
    warned = [r for r in report.results if r.outcome is Outcome.WARN]
    assert warned
    assert all(r.name not in fold_2 for r in warned)
    assert all("names seq" in r.message for r in warned)


def test_a_result_carries_the_error_its_implementation_answered(
    reference_report: VectorReport,
) -> None:
    cases = {case.id: case for _, case in iter_cases()}
    for result in reference_report.dump()["results"]:
        assert isinstance(result, dict)
        case = cases[result["id"]]
        if case.expects_error:
            assert result["errorCode"] == -32000
            assert result["errorKind"] == case.expect["error"]["kind"]
            assert result["errorRule"] in case.expected_rules
            assert result["errorSeq"] == case.expect["error"].get("seq")
        else:
            assert result["errorCode"] is None
            assert result["errorKind"] is result["errorRule"] is None


@pytest.mark.slow
def test_an_internal_error_of_the_implementation_is_an_error_not_a_failure(
    tmp_path: Path,
) -> None:
    code, report = run_bad("fails_internally_on_diff", tmp_path)
    assert code == 3
    errors = [r for r in report["results"] if r["outcome"] == "error"]
    assert errors
    assert {r["method"] for r in errors} == {"codec/diff"}
    assert all("-32603" in r["message"] for r in errors)
    assert report["counts"]["fail"] == 0


def test_control_characters_on_an_adapters_stderr_are_shown_as_escapes() -> None:
    # an escape sequence that would set the terminal's title and clear it
    connection = StdioConnection(
        [
            sys.executable,
            "-c",
            "import sys; sys.stderr.write('\\x1b]0;pwned\\x07\\x1b[2J\\tend\\n')",
        ],
        timeout=5.0,
    )
    with pytest.raises(AdapterStartupFailed):
        connection.initialize()
    connection.close()
    assert connection.stderr_tail == "\\x1b]0;pwned\\x07\\x1b[2J\tend"


def test_an_adapter_that_exited_before_its_first_request_is_said_to_have_exited() -> (
    None
):
    connection = StdioConnection(
        [sys.executable, "-c", "import sys; sys.exit(3)"], timeout=5.0
    )
    assert connection.wait() == 3  # gone before the suite writes to it
    with pytest.raises(AdapterStartupFailed) as caught:
        connection.initialize()
    connection.close()
    assert "the adapter exited before reading its request (exit status 3)" in str(
        caught.value
    )
