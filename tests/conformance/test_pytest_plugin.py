"""The pytest plugin: the suite as items of another project's pytest run.

Each test runs a real inner pytest (`pytester`) in a temporary folder with
a test file of its own, the way a harness project would gate on the suite:
``pytest --reqfold-impl CMD``. The implementations are the reference (in
process, or as a child process) and members of the known-bad galleries,
run as real child processes. Runs are kept short with
``--reqfold-revision session-prefix``, one scenario, and ``-k``.

Plugin autoloading is switched off in the inner runs and the plugin named
with ``-p``, so a run is the same whether or not the installed reqfold
declares the entry point yet.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tomllib
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Literal

import pytest

from reqfold.conformance.codec.loading import iter_cases
from reqfold.reference.revisions import Revision

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BAD_ADAPTERS = ROOT / "tests" / "conformance" / "bad_adapters"
BAD_HARNESSES = ROOT / "tests" / "conformance" / "bad_harnesses"
CHAOS_HARNESSES = ROOT / "tests" / "conformance" / "chaos_harnesses"
PLUGIN = ("-p", "reqfold.conformance.pytest_plugin")
SESSION_PREFIX = ("--reqfold-revision", "session-prefix")

OWN_TEST = """
def test_the_projects_own_test():
    assert 1 + 1 == 2
"""

COUNTING = """
import pathlib, runpy, sys
log, target = sys.argv[1], sys.argv[2]
with open(log, "a") as starts:
    starts.write("started\\n")
sys.argv = [target]
if target.endswith(".py"):
    sys.path.insert(0, str(pathlib.Path(target).parent))
    runpy.run_path(target, run_name="__main__")
else:
    runpy.run_module(target, run_name="__main__", alter_sys=True)
"""
"""An adapter command that notes each start in a file, then runs a script
(a path) or a module (a dotted name)."""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A harness project's folder with one test of its own."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv(
        "PYTHONPATH", f"{ROOT}:{__import__('os').environ.get('PYTHONPATH', '')}"
    )
    pytester.makepyfile(test_own=OWN_TEST)
    return pytester.path


def command(script: Path) -> str:
    return shlex.join([sys.executable, str(script)])


def counted(pytester: pytest.Pytester, target: str) -> tuple[str, Path]:
    """An adapter command running `target` that counts its starts in a file."""
    counter = pytester.path / "counting_adapter.py"
    counter.write_text(COUNTING, encoding="utf-8")
    log = pytester.path / "starts.log"
    return shlex.join([sys.executable, str(counter), str(log), target]), log


def starts(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return result.parseoutcomes()


def section(result: pytest.RunResult, title: str) -> str:
    """The text of one section of pytest's report (``= FAILURES =``, say)."""
    text = result.stdout.str().split(f"= {title} =", 1)[1]
    return re.split(r"^(?:=+ .* =+|-+ reqfold -+)$", text, maxsplit=1, flags=re.M)[0]


def node_ids(reprec: pytest.HookRecorder, outcome: str) -> set[str]:
    """The reqfold items that ended `outcome`: passed, failed, or error (in setup)."""
    ended: dict[str, str] = {}
    for report in reprec.getreports("pytest_runtest_logreport"):
        if not report.nodeid.startswith("reqfold::"):
            continue
        if report.failed:
            ended[report.nodeid] = "failed" if report.when == "call" else "error"
        elif report.when == "call":
            ended.setdefault(report.nodeid, report.outcome)
    return {node for node, ended_as in ended.items() if ended_as == outcome}


# ---------------------------------------------------------------- inert


def test_without_reqfold_impl_nothing_is_collected_and_no_suite_module_loaded(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_inert="""
        import sys

        def test_the_plugin_loaded_nothing_of_the_suite():
            assert "reqfold.conformance.pytest_plugin" in sys.modules
            heavy = [
                name
                for name in (
                    "reqfold.conformance.pytest_plugin.suite",
                    "reqfold.conformance.harness.runner",
                    "reqfold.conformance.codec.cases",
                    "fakes",
                    "uvicorn",
                )
                if name in sys.modules
            ]
            assert heavy == []
        """
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-v")
    result.assert_outcomes(passed=2)
    assert "reqfold::" not in result.stdout.str()


def test_a_reqfold_option_without_reqfold_impl_is_a_usage_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest(*PLUGIN, "--reqfold-strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--reqfold-strict needs --reqfold-impl*"])


# ---------------------------------------------------------- the reference


def test_the_reference_passes_every_vector_and_scenario_check_beside_own_tests(
    pytester: pytest.Pytester, project: Path
) -> None:
    reprec = pytester.inline_run(
        *PLUGIN,
        *("--reqfold-impl", "reference", *SESSION_PREFIX),
        *("--reqfold-scenario", "plain-turns"),
    )
    passed = node_ids(reprec, "passed")
    vectors = {
        f"reqfold::vectors::session-prefix/{case.id}"
        for _, case in iter_cases(revisions={Revision.SESSION_PREFIX})
    }
    assert vectors <= passed  # every vector of the revision, each an item
    scenario_checks = {node for node in passed if "::scenarios::" in node}
    assert "reqfold::scenarios::plain-turns@session-prefix/log/JSONL-1" in passed
    assert len(scenario_checks) > 20
    reprec.assertoutcome(passed=len(vectors) + len(scenario_checks) + 1)


def test_items_carry_their_rules_as_a_marker_and_a_keyword(
    pytester: pytest.Pytester, project: Path
) -> None:
    base = (*PLUGIN, "--reqfold-impl", "reference", *SESSION_PREFIX)
    by_rule = pytester.runpytest(
        *base, "--reqfold-scenario", "plain-turns", "--co", "-q", "-k", "JSONL-1"
    )
    listed = [line for line in by_rule.outlines if line.startswith("reqfold::")]
    assert listed == ["reqfold::scenarios::plain-turns@session-prefix/log/JSONL-1"]
    by_marker = pytester.runpytest(
        *base,
        *("--reqfold-scenario", "plain-turns", "--co", "-q"),
        *("-m", "reqfold_rule(level='SHOULD')"),
    )
    should = [line for line in by_marker.outlines if line.startswith("reqfold::")]
    assert should  # the SHOULD-level checks, and nothing else
    assert "test_own.py::test_the_projects_own_test" not in by_marker.outlines
    assert "reqfold::scenarios::plain-turns@session-prefix/log/JSONL-1" not in should


# ------------------------------------------------------- known-bad ones


def test_a_bad_adapter_fails_the_vectors_it_breaks_with_rules_expected_and_found(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_ADAPTERS / "keeps_empty_fields.py")
    result = pytester.runpytest(
        *PLUGIN, "--reqfold-impl", impl, *SESSION_PREFIX, "-k", "canonical-drops"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    failures = section(result, "FAILURES")
    assert "reqfold session-prefix/canonical-drops-empty-system" in failures
    result.stdout.fnmatch_lines(
        [
            "[[]HDR-4, SYS-2[]] a MUST rule is broken: result differs: expected"
            ' {"header":{"config":{"model":"m"}}},'
            ' got {"header":{"config":{"model":"m"},"system":""}}',
            "  rule      HDR-4 (MUST): The canonical form of a header drops*",
            "  vector    canonical-drops-empty-system: codec/canonical under*",
        ]
    )
    assert "Traceback" not in failures
    assert ".py:" not in failures  # no frame of reqfold's own code


def test_a_lenient_adapter_passes_core_and_its_unclaimed_strict_cases_are_not_collected(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_ADAPTERS / "validates_nothing.py")
    result = pytester.runpytest(*PLUGIN, "--reqfold-impl", impl, *SESSION_PREFIX)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    cases = list(iter_cases(revisions={Revision.SESSION_PREFIX}))
    core = sum(case.profile == "core" for _, case in cases)
    result.assert_outcomes(passed=core + 1)  # core vectors and the own test
    result.stdout.fnmatch_lines(
        [f"*{len(cases) - core} vectors of the strict profile not collected*"]
    )


def test_a_crashing_adapter_is_an_error_of_the_cases_it_crashes_on_not_a_failure(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_ADAPTERS / "crashes_on_fold.py")
    reprec = pytester.inline_run(
        *PLUGIN,
        *("--reqfold-impl", impl, *SESSION_PREFIX),
        *("-k", "fold-deltas-in-order or canonical-config-only"),
    )
    assert node_ids(reprec, "error") == {
        "reqfold::vectors::session-prefix/fold-deltas-in-order"
    }
    assert node_ids(reprec, "passed") == {
        "reqfold::vectors::session-prefix/canonical-config-only"
    }
    (error,) = [
        report
        for report in reprec.getreports("pytest_runtest_logreport")
        if report.failed
    ]
    text = str(error.longrepr)
    assert text.startswith("[FOLD-1] no verdict: crash:")
    assert "Traceback" not in text


def test_a_harness_that_crashes_mid_scenario_is_one_error_with_its_stderr(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(CHAOS_HARNESSES / "crashes_in_second_turn.py")
    result = pytester.runpytest(
        *PLUGIN,
        *("--reqfold-impl", impl, *SESSION_PREFIX),
        *("--reqfold-scenario", "plain-turns", "-k", "scenarios"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert outcomes(result)["errors"] == 1
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of reqfold plain-turns@session-prefix/run*",
            "[[]WRITER-1, WRITER-2, CACHE-1[]] no verdict: crash: *",
            "  found     crash: *",
            "              chaos: segmentation fault in turn 2 of session*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_bad_harness_fails_the_checks_that_catch_it_and_junit_names_their_rules(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_HARNESSES / "recomposes_every_turn.py")
    result = pytester.runpytest(
        *PLUGIN,
        *("--reqfold-impl", impl, *SESSION_PREFIX),
        *("--reqfold-scenario", "prefix-composed-once", "-k", "scenarios"),
        "--junitxml=report.xml",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the verdict in the words of reqfold run, closing the reqfold summary
    result.stdout.fnmatch_lines(
        ["reqfold verdict: NOT CONFORMANT: a MUST rule is broken"]
    )
    result.stdout.fnmatch_lines(
        [
            "[[]PREFIX-1[]] a MUST rule is broken: contributor 'rules' was called"
            " 3 time(s) by instance i1, expected 1",
            "  scenario  prefix-composed-once under session-prefix*",
        ]
    )
    cases = {
        case.get("name"): case
        for case in ET.parse(pytester.path / "report.xml").iter("testcase")
    }
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    prefix = "prefix-composed-once@session-prefix/"
    assert failed == {f"{prefix}calls/rules@i1", f"{prefix}calls/skills@i1"}
    properties = [
        (p.get("name"), p.get("value"))
        for p in cases[f"{prefix}calls/rules@i1"].iter("property")
    ]
    assert properties == [
        ("reqfold_rule", "PREFIX-1"),
        ("reqfold_level", "MUST"),
        ("reqfold_outcome", "fail"),
    ]
    passing = cases[f"{prefix}log/JSONL-1"]
    assert ("reqfold_rule", "JSONL-1") in [
        (p.get("name"), p.get("value")) for p in passing.iter("property")
    ]


def runpytest_with_fresh_warnings(
    pytester: pytest.Pytester, *args: str
) -> pytest.RunResult:
    """An inline run under the warning filters of a fresh interpreter, not
    under this project's ``filterwarnings = error``: what a harness
    project's own ``pytest`` would show, without a child's start-up."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category in FRESH_FILTERS:
            warnings.simplefilter(action, category)
        # inline only: the plugin module is already imported, so not rewritten
        return pytester.runpytest(
            *args, "-W", "ignore::pytest.PytestAssertRewriteWarning"
        )


FRESH_FILTERS: tuple[tuple[Literal["ignore"], type[Warning]], ...] = (
    ("ignore", DeprecationWarning),
    ("ignore", PendingDeprecationWarning),
    ("ignore", ImportWarning),
    ("ignore", ResourceWarning),
)
"""Python's default filters less the one for ``__main__``: a fresh process's."""


def test_should_findings_warn_and_fail_only_under_reqfold_strict(
    pytester: pytest.Pytester, project: Path
) -> None:
    # Inline, with the warning filters a fresh process starts with: this
    # project's own run makes warnings errors, which an inline run inherits.
    impl = command(BAD_ADAPTERS / "unordered_maps.py")
    base = (*PLUGIN, "--reqfold-impl", impl, *SESSION_PREFIX)
    selection = ("-k", "canonical-keeps-message-prefix or canonical-config-only")
    lenient = runpytest_with_fresh_warnings(pytester, *base, *selection)
    assert lenient.ret == pytest.ExitCode.OK
    counts = outcomes(lenient)
    assert (counts["passed"], counts["warnings"], counts.get("failed")) == (2, 1, None)
    lenient.stdout.fnmatch_lines(
        [
            "reqfold::vectors::session-prefix/canonical-keeps-message-prefix",
            "*ReqfoldShouldWarning: [[]MSGS-1, HDR-4[]] a SHOULD-level finding, not"
            " a broken MUST: member order differs: expected *",
        ]
    )
    strict = runpytest_with_fresh_warnings(
        pytester, *base, *selection, "--reqfold-strict"
    )
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    counts = outcomes(strict)
    assert (counts["passed"], counts["failed"], counts.get("warnings")) == (1, 1, None)
    strict.stdout.fnmatch_lines(["*failed by --reqfold-strict: member order differs*"])


def test_expected_failures_marked_xfail_in_a_conftest_pass_until_they_go_stale(
    pytester: pytest.Pytester, project: Path
) -> None:
    known = "reqfold::vectors::session-prefix/canonical-drops-empty-system"
    pytester.makeconftest(
        f"""
        import pytest

        EXPECTED = {{{known!r}: "our canonical form keeps system; fixed in 2.0"}}

        def pytest_collection_modifyitems(items):
            for item in items:
                if item.nodeid in EXPECTED:
                    reason = EXPECTED[item.nodeid]
                    item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
        """
    )
    selection = ("-k", "canonical-drops-empty-system and not tools", "-rfxX")
    bad = command(BAD_ADAPTERS / "keeps_empty_fields.py")
    expected = pytester.runpytest(
        *PLUGIN, "--reqfold-impl", bad, *SESSION_PREFIX, *selection
    )
    assert expected.ret == pytest.ExitCode.OK
    assert outcomes(expected)["xfailed"] == 1
    expected.stdout.fnmatch_lines(["reqfold verdict: CONFORMANT"])
    expected.stdout.fnmatch_lines([f"XFAIL {known} - our canonical form keeps system*"])
    reference_codec = shlex.join([sys.executable, "-m", "reqfold.reference.adapter"])
    stale = pytester.runpytest(
        *PLUGIN, "--reqfold-impl", reference_codec, *SESSION_PREFIX, *selection
    )
    assert stale.ret == pytest.ExitCode.TESTS_FAILED
    stale.stdout.fnmatch_lines(
        ["[[]XPASS(strict)[]] our canonical form keeps*", f"FAILED {known} - [[]XPASS*"]
    )
    stale.stdout.fnmatch_lines(["reqfold verdict: STALE EXPECTED FAILURE: *"])


def test_the_expected_failures_file_of_reqfold_run_gives_xfail_and_stale_entries_fail(
    pytester: pytest.Pytester, project: Path
) -> None:
    known = "session-prefix/canonical-drops-empty-system"
    listed = pytester.path / "expected.json"
    listed.write_text(
        json.dumps({known: {"reason": "our canonical form keeps system"}}),
        encoding="utf-8",
    )
    options = (*SESSION_PREFIX, "--reqfold-expected-failures", str(listed))
    selection = ("-k", "canonical-drops-empty-system and not tools", "-rfxX")
    bad = command(BAD_ADAPTERS / "keeps_empty_fields.py")
    expected = pytester.runpytest(*PLUGIN, "--reqfold-impl", bad, *options, *selection)
    assert expected.ret == pytest.ExitCode.OK
    assert outcomes(expected)["xfailed"] == 1
    expected.stdout.fnmatch_lines([f"XFAIL reqfold::vectors::{known} - our canon*"])
    reference_codec = shlex.join([sys.executable, "-m", "reqfold.reference.adapter"])
    stale = pytester.runpytest(
        *PLUGIN, "--reqfold-impl", reference_codec, *options, *selection
    )
    assert stale.ret == pytest.ExitCode.TESTS_FAILED
    stale.stdout.fnmatch_lines(["[[]XPASS(strict)[]] our canonical form keeps*"])
    crashing = command(BAD_ADAPTERS / "fails_internally_on_diff.py")
    listed.write_text(
        json.dumps({"session-prefix/diff-equal-headers-no-delta": {"reason": "x"}})
    )
    no_verdict = pytester.runpytest(
        *PLUGIN, "--reqfold-impl", crashing, *options, "-k", "diff-equal-headers-no"
    )
    assert no_verdict.ret == pytest.ExitCode.TESTS_FAILED  # an error, not an xfail
    assert outcomes(no_verdict).get("xfailed") is None
    assert outcomes(no_verdict)["errors"] == 1
    listed.write_text('{"no-such/check": {"reason": "x"}}', encoding="utf-8")
    unknown = pytester.runpytest(*PLUGIN, "--reqfold-impl", bad, *options)
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*names no check of this suite: no-such/check*"])


# ---------------------------------------------- selection and stopping


def test_deselected_vectors_never_start_the_codec_implementation(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl, log = counted(pytester, "reqfold.reference.harness_adapter")
    base = (*PLUGIN, "--reqfold-impl", impl, *SESSION_PREFIX)
    scenarios_only = pytester.inline_run(
        *base, "--reqfold-scenario", "plain-turns", "-k", "scenarios"
    )
    assert node_ids(scenarios_only, "passed")
    assert starts(log) == 1  # the harness, for the scenarios; no codec start
    one_vector = pytester.inline_run(
        *base, "--reqfold-scenario", "plain-turns", "-k", "canonical-config-only"
    )
    assert node_ids(one_vector, "passed") == {
        "reqfold::vectors::session-prefix/canonical-config-only"
    }
    assert starts(log) == 3  # then the harness again, and the codec once


def test_x_stops_at_the_first_broken_check(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_ADAPTERS / "contrarian.py")
    result = pytester.runpytest(*PLUGIN, "--reqfold-impl", impl, *SESSION_PREFIX, "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    counts = outcomes(result)
    assert counts["failed"] == 1
    assert counts.get("passed", 0) <= 1  # at most the project's own test
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_lf_runs_again_only_the_checks_that_failed(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_ADAPTERS / "keeps_empty_fields.py")
    base = (*PLUGIN, "--reqfold-impl", impl, *SESSION_PREFIX)
    first = pytester.inline_run(*base, "-k", "canonical")
    failed = node_ids(first, "failed")
    assert failed
    assert node_ids(first, "passed")
    again = pytester.inline_run(*base, "--lf")
    assert node_ids(again, "failed") == failed
    assert node_ids(again, "passed") == set()


# --------------------------------------------------------------- xdist


def test_under_xdist_the_harness_is_played_once_and_each_worker_starts_the_codec(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytest.importorskip("xdist")
    impl, log = counted(pytester, str(BAD_HARNESSES / "recomposes_every_turn.py"))
    result = pytester.runpytest_subprocess(
        *PLUGIN,
        *("-p", "xdist.plugin", "-n", "2"),
        *("--reqfold-impl", impl, *SESSION_PREFIX),
        *("--reqfold-scenario", "prefix-composed-once", "-rf"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    counts = outcomes(result)
    vectors = len(list(iter_cases(revisions={Revision.SESSION_PREFIX})))
    assert counts["failed"] == 2
    assert counts["passed"] > vectors  # every vector, the project's test, checks
    prefix = "FAILED reqfold::scenarios::prefix-composed-once@session-prefix/"
    result.stdout.fnmatch_lines_random(
        [f"{prefix}calls/rules@i1*", f"{prefix}calls/skills@i1*"]
    )
    assert starts(log) == 3  # the controller's harness, one codec per worker


# ------------------------------------------------------- bad input


def test_an_implementation_that_cannot_start_is_a_collection_error_not_a_traceback(
    pytester: pytest.Pytester, project: Path
) -> None:
    missing = str(pytester.path / "no-such-adapter")
    result = pytester.runpytest(*PLUGIN, "--reqfold-impl", missing)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["reqfold: no check collected: the implementation did not start: *"]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_revision_the_implementation_does_not_declare_is_a_collection_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    impl = command(BAD_ADAPTERS / "declares_session_prefix_only.py")
    result = pytester.runpytest(
        *PLUGIN, "--reqfold-impl", impl, "--reqfold-revision", "header-events"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "reqfold: no check collected: the implementation does not declare"
            " header-events (it declares session-prefix)"
        ]
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--reqfold-impl", ""), "--reqfold-impl is empty*"),
        (("--reqfold-impl", "python 'x"), "*cannot be split like a shell would*"),
        (
            ("--reqfold-impl", "reference", "--reqfold-revision", "nope"),
            "--reqfold-revision: unknown revision 'nope'*",
        ),
        (
            ("--reqfold-impl", "reference", "--reqfold-timeout", "0"),
            "--reqfold-timeout must be a number of seconds*",
        ),
        (
            ("--reqfold-impl", "reference", "--reqfold-scenario", "nosuch"),
            "--reqfold-scenario: no scenario 'nosuch'*",
        ),
    ],
)
def test_bad_options_are_a_usage_error_with_a_one_line_reason(
    pytester: pytest.Pytester, project: Path, args: tuple[str, ...], said: str
) -> None:
    result = pytester.runpytest(*PLUGIN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {said}"])


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    entry_points = project["project"]["entry-points"]["pytest11"]
    assert entry_points == {"reqfold": "reqfold.conformance.pytest_plugin"}


@pytest.mark.spec("PREFIX-7")
def test_the_verdict_names_a_scenario_run_not_covered_with_its_reason(
    pytester: pytest.Pytester, project: Path
) -> None:
    """The verdict is made of the judge's checks whole (their detail too),
    not of checks rebuilt from what pytest reports."""
    impl = command(
        ROOT / "tests/conformance/partial_harnesses/declares_no_compaction.py"
    )
    result = pytester.runpytest(
        *PLUGIN,
        *("--reqfold-impl", impl, *SESSION_PREFIX),
        *("--reqfold-scenario", "compaction-keeps-prefix-and-system"),
        *("--reqfold-scenario", "plain-turns", "-k", "scenarios"),
    )
    result.stdout.fnmatch_lines(
        [
            "reqfold verdict: CONFORMANT on 1 of 2 scenario runs; not covered:"
            " compaction-keeps-prefix-and-system (no on-demand compaction declared)"
        ]
    )
