"""The pytest plugin's after-run check of the expected-failures file.

An entry naming a check of a scenario that played to the end under its
revision, but that the run does not have (a misspelt or renamed check),
would otherwise hide nothing and say nothing; ``reqfold run`` ends with no
verdict on it (exit 2), and a plugin session that passed ends with pytest's
usage error. Each test runs a real inner pytest (`pytester`), one scenario,
one revision, against the in-process reference or a chaos harness (a real
child process).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ("-p", "reqfold.conformance.pytest_plugin")
PLAIN_TURNS = (
    *("--reqfold-revision", "session-prefix", "--reqfold-scenario", "plain-turns"),
    *("-k", "scenarios"),
)
ONE_RUN = ("--reqfold-impl", "reference", *PLAIN_TURNS)
CRASHING = shlex.join(
    [
        sys.executable,
        str(ROOT / "tests/conformance/chaos_harnesses/crashes_in_second_turn.py"),
    ]
)
MISSPELT = "plain-turns@session-prefix/no-such-check"
NOT_PLAYED = "tool-call-turn@session-prefix/no-such-check"


@pytest.fixture
def listed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An expected-failures file: one check the played run lacks, one of a
    scenario this run does not play."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    path = pytester.path / "expected.json"
    path.write_text(
        json.dumps({MISSPELT: {"reason": "x"}, NOT_PLAYED: {"reason": "y"}}),
        encoding="utf-8",
    )
    return path


def test_an_entry_its_played_scenario_lacks_is_a_usage_error_named_after_the_run(
    pytester: pytest.Pytester, listed: Path
) -> None:
    result = pytester.runpytest(
        *PLUGIN, *ONE_RUN, "--reqfold-expected-failures", str(listed)
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.parseoutcomes()["passed"] > 0  # the checks themselves ran
    result.stdout.fnmatch_lines(
        [
            "error: --reqfold-expected-failures names checks this run does not"
            f" have: {MISSPELT} (their scenario played to the end under their*"
        ]
    )
    assert NOT_PLAYED not in result.stdout.str()  # not run this time: not stale


def test_an_entry_of_a_scenario_left_out_of_the_run_is_not_reported(
    pytester: pytest.Pytester, listed: Path
) -> None:
    listed.write_text(json.dumps({NOT_PLAYED: {"reason": "y"}}), encoding="utf-8")
    result = pytester.runpytest(
        *PLUGIN, *ONE_RUN, "--reqfold-expected-failures", str(listed)
    )
    assert result.ret == pytest.ExitCode.OK
    assert "names checks this run does not have" not in result.stdout.str()


def test_under_xdist_the_controller_reports_the_entry_once(
    pytester: pytest.Pytester, listed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess(
        *PLUGIN,
        *("-p", "xdist.plugin", "-n", "2"),
        *ONE_RUN,
        *("--reqfold-expected-failures", str(listed)),
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stdout.str().count(MISSPELT) == 1


def test_a_run_the_implementation_broke_lacks_checks_without_making_them_unseen(
    pytester: pytest.Pytester, listed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    listed.write_text(json.dumps({MISSPELT: {"reason": "x"}}), encoding="utf-8")
    result = pytester.runpytest(
        *PLUGIN,
        *("--reqfold-impl", CRASHING, *PLAIN_TURNS, "--reqfold-timeout", "5"),
        *("--reqfold-expected-failures", str(listed), "-rE"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the crash, as without a file
    result.stdout.fnmatch_lines(
        ["ERROR reqfold::scenarios::plain-turns@session-prefix/run*"]
    )
    assert "names checks this run does not have" not in result.stdout.str()


def test_a_session_that_failed_keeps_its_status_and_still_names_the_entry(
    pytester: pytest.Pytester, listed: Path
) -> None:
    pytester.makepyfile(test_own="def test_own_scenarios_fail():\n    assert False\n")
    result = pytester.runpytest(
        *PLUGIN, *ONE_RUN, "--reqfold-expected-failures", str(listed)
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(["error: --reqfold-expected-failures names checks*"])
