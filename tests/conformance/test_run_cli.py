"""``reqfold run``: one verdict over every part, and clear exits on bad input.

Runs about what ``reqfold run`` reports call it in the test's process
(`cli_in_process`: the adapter under test is still a child process), which
saves the CPU a child ``reqfold`` spends importing the suite and warming
hypothesis up (a run of one revision's vectors and properties: 2.0 s as a
child, 1.2 to 1.4 s in a process that has run one before). What only a
real process shows (exit statuses through ``python -m``, signals, no
traceback on stderr) keeps a real ``python -m reqfold.conformance.cli run``:
exit statuses 2, 3 and 143 here, 0, 1 and 2 through the documented shell
recipe in tests/conformance/test_report_run.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import partial
from pathlib import Path

import commands
import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.run import cli as run_cli
from reqfold.conformance.verdict import (
    BROKEN,
    CONFORMANT,
    NO_VERDICT,
    Check,
    exit_status,
    render_table,
    rule_table,
)

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "conformance" / "bad_adapters"


reqfold = partial(commands.reqfold, "run")
"""``reqfold run ARGS`` as a child process: exit status, stdout, stderr."""
run_here = partial(reqfold_here, "run")
"""``reqfold run ARGS`` in this process: exit status, stdout, stderr."""


def check(outcome: Outcome, rules: tuple[str, ...] = ("HDR-1",)) -> Check:
    return Check(
        part="vectors",
        id=f"case-{outcome.value}",
        revision="session-prefix",
        rules=rules,
        outcome=outcome,
    )


# ------------------------------------------------------------ the verdict


def test_a_failure_anywhere_is_not_conformant_even_beside_errors() -> None:
    checks = [check(Outcome.PASS), check(Outcome.ERROR), check(Outcome.FAIL)]
    assert exit_status(checks) == BROKEN


def test_errors_without_failures_are_no_verdict() -> None:
    assert exit_status([check(Outcome.PASS), check(Outcome.ERROR)]) == NO_VERDICT


def test_zero_checks_is_never_a_pass() -> None:
    assert exit_status([]) == NO_VERDICT
    assert exit_status([check(Outcome.SKIP)]) == NO_VERDICT


def test_should_warnings_pass_unless_strict() -> None:
    checks = [check(Outcome.PASS), check(Outcome.WARN, ("HDR-5",))]
    assert exit_status(checks) == CONFORMANT
    assert exit_status(checks, strict=True) == BROKEN


def test_a_start_up_failure_is_no_verdict_even_when_something_passed() -> None:
    assert exit_status([check(Outcome.PASS)], startup_error=True) == NO_VERDICT


def test_the_rule_table_tallies_each_rule_and_names_its_first_problem() -> None:
    rows = rule_table(
        [
            check(Outcome.PASS, ("HDR-1", "HDR-2")),
            check(Outcome.FAIL, ("HDR-2",)),
            check(Outcome.SKIP, ("HDR-3",)),
        ]
    )
    assert [row.rule for row in rows] == ["HDR-1", "HDR-2"]
    second = rows[1]
    assert second.counts[Outcome.PASS] == 1
    assert second.counts[Outcome.FAIL] == 1
    assert second.first_problem == "case-fail"
    assert "case-fail" in render_table(rows)[-1]


# ------------------------------------------------------------ the command


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1", "PREFIX-5", "CACHE-1")
def test_the_reference_in_process_is_conformant_on_every_part() -> None:
    status, out, err = run_here("--impl", "reference")
    assert status == 0, out[-3000:] + err
    for part in ("vectors", "properties", "scenarios"):
        # each part ran checks, and all of them passed ("0 checks: none ran"
        # is a row too, and a verdict of CONFORMANT)
        counted = re.search(rf"\n{part:<11} *(\d+) checks: (\d+) pass\n", out)
        assert counted, (part, out[-3000:])
        assert int(counted[1]) == int(counted[2]) > 0
    assert "Verdict: CONFORMANT" in out
    assert "FAIL" not in out
    assert "ERROR" not in out


@pytest.mark.slow
@pytest.mark.spec("DELTA-2", "FOLD-1")
def test_a_codec_only_implementation_gets_vectors_and_properties_but_no_scenarios() -> (
    None
):
    # One revision: which parts run is the point here; the adapter process
    # passes every vector and property of every revision in
    # test_vector_run.py and test_differential_properties.py.
    status, out, err = run_here(
        "--impl",
        f"{sys.executable} -m reqfold.reference.adapter",
        "--revision",
        "request-messages",
    )
    assert status == 0, out[-3000:] + err
    assert "\nvectors " in out
    assert "\nproperties " in out
    assert "\nscenarios " not in out


@pytest.mark.slow
@pytest.mark.spec("TOOLS-5")
def test_a_broken_codec_fails_and_its_counterexample_is_printed_as_a_vector() -> None:
    impl = f"{sys.executable} {BAD / 'drops_tool_removals.py'}"
    # One revision shows it (the bug is the same in each): a third of the run.
    status, out, _ = run_here(
        "--impl", impl, "--only", "properties", "--revision", "session-prefix"
    )
    assert status == 1
    assert "FAIL   properties  property/apply/session-prefix  [" in out
    assert "counterexample, as a vector ready to commit:" in out
    assert '"expect"' in out
    assert "Verdict: NOT CONFORMANT" in out


@pytest.mark.slow
def test_a_command_that_cannot_start_is_no_verdict_without_a_traceback(
    tmp_path: Path,
) -> None:
    status, out, err = reqfold("--impl", str(tmp_path / "no-such-adapter"))
    assert status == 3
    assert "did not start" in err
    assert "Traceback" not in out + err
    assert "NO VERDICT" in out


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--revision", "final"), "final"),
        (("--scenario", "no-such-scenario"), "--scenario: no scenario 'no-such-"),
        (("--scenario", "plain-turn"), "(did you mean 'plain-turns'?)"),
        (("--timeout", "0"), "--timeout must be"),
        (("--only", "everything"), "invalid choice"),
        (("--impl", ""), "--impl is empty"),
        (("--impl", "   "), "--impl is empty"),
        (("--impl", "python 'x"), "cannot be split"),
        (("--timeout", "nan"), "--timeout must be"),
        (("--timeout", "inf"), "--timeout must be"),
        (("--examples", "0"), "--examples must be"),
        (("--keep", ""), "--keep is empty"),
        (("--keep", __file__), "is not a folder"),
    ],
)
def test_bad_arguments_exit_2_with_a_one_line_reason(
    args: tuple[str, ...], complaint: str
) -> None:
    assert_one_line_reason(*run_here(*args), complaint)


def test_list_scenarios_prints_every_scenario_id_one_a_line() -> None:
    status, out, err = run_here("--list-scenarios")
    assert status == 0, err
    ids = [line.split()[0] for line in out.splitlines()]
    assert ids == sorted(scenario.id for scenario in load_scenarios())
    assert "plain-turns" in ids


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--timeout", "0"), "--timeout must be"),
        (("--only", "everything"), "invalid choice"),
    ],
)
def test_a_bad_argument_exits_2_with_its_reason_from_a_real_process(
    args: tuple[str, ...], complaint: str
) -> None:
    """Ours and argparse's: exit status and stderr as a shell sees them."""
    assert_one_line_reason(*reqfold(*args, timeout=60), complaint)


def test_the_scenario_files_are_read_only_by_a_run_that_may_play_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A child ``reqfold run`` with a bad option, or one that plays no
    scenario, exits without checking the scenario files against their
    schema (a tenth of a second of CPU)."""

    def unread() -> None:
        raise AssertionError("the scenario files were read")

    monkeypatch.setattr(run_cli, "load_scenarios", unread)
    for args, complaint in (
        (("--timeout", "0"), "--timeout must be"),
        (("--report-json", "same.json", "--junit", "same.json"), "--junit"),
    ):
        assert_one_line_reason(*run_here(*args), complaint)
    status, out, err = run_here(
        *("--impl", "reference", "--only", "vectors", "--revision", "session-prefix")
    )
    assert status == 0, out + err
    assert "Verdict: CONFORMANT" in out


def test_a_scenario_chosen_for_a_run_that_plays_none_is_said_in_a_note() -> None:
    status, out, err = run_here(
        *("--impl", "reference", "--only", "vectors", "--revision", "session-prefix"),
        *("--scenario", "plain-turns"),
    )
    assert status == 0, out + err
    assert "note: --scenario: no scenario ran, so it chose nothing\n" in out


def assert_one_line_reason(status: int, out: str, err: str, complaint: str) -> None:
    assert status == 2
    assert complaint in err
    assert "Traceback" not in out + err
    reason = [line for line in err.splitlines() if complaint in line]
    assert len(reason) == 1
    assert reason[0].startswith(("reqfold run: ", "reqfold run: error: "))


@pytest.mark.slow
def test_a_revision_the_implementation_does_not_declare_exits_2_and_says_so() -> None:
    impl = f"{sys.executable} {BAD / 'declares_session_prefix_only.py'}"
    status, _, err = run_here("--impl", impl, "--revision", "header-events")
    assert status == 2
    assert "does not declare header-events" in err
    assert "it declares session-prefix" in err


@pytest.mark.slow
def test_an_adapter_that_refuses_the_protocol_version_is_no_verdict() -> None:
    impl = f"{sys.executable} {BAD / 'refuses_version.py'}"
    status, out, err = run_here("--impl", impl)
    assert status == 3
    assert "did not start" in err
    assert "Traceback" not in out + err


@pytest.mark.slow
def test_options_that_select_nothing_exit_2_and_say_why() -> None:
    status, out, _ = run_here(
        "--impl",
        f"{sys.executable} -m reqfold.reference.adapter",
        "--only",
        "scenarios",
    )
    assert status == 2
    assert (
        "note: scenarios not run: the implementation does not declare 'harness'" in out
    )
    assert "nothing was checked" in out
    status, out, _ = run_here(
        "--only",
        "scenarios",
        "--scenario",
        "request-messages-framing",
        "--revision",
        "session-prefix",
    )
    assert status == 2
    assert "request-messages-framing not played: it is for request-messages" in out


@pytest.mark.slow
def test_sigterm_stops_a_run_at_once_and_leaves_no_adapter(tmp_path: Path) -> None:
    """Even inside the properties, where hypothesis would take an exit for a failure."""
    process = subprocess.Popen(
        [
            *(
                sys.executable,
                "-m",
                "reqfold.conformance.cli",
                "run",
                "--only",
                "properties",
            ),
            *("--examples", "100000"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    process.stdout.readline()  # the identity line: the properties are under way
    process.terminate()
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("reqfold run did not stop on SIGTERM")
    assert process.returncode == 143
    assert "interrupted" in err
    assert "Traceback" not in err
    assert not (tmp_path / ".hypothesis").exists()


@pytest.mark.slow
def test_keep_into_a_folder_with_files_keeps_into_a_fresh_sub_folder_and_says_so(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    # files named as the run names its own: the user's, not to be touched
    mine = {
        "plain-turns.session-prefix.jsonl": "my log\n",
        "plain-turns.session-prefix.requests.jsonl": "my requests\n",
    }
    for name, text in mine.items():
        (kept / name).write_text(text, encoding="utf-8")
    status, out, err = reqfold_here(
        *("run", "--only", "scenarios", "--scenario", "plain-turns"),
        *("--revision", "session-prefix", "--keep", str(kept)),
    )
    assert status == 0, out + err
    assert {p.name: p.read_text(encoding="utf-8") for p in kept.glob("*.jsonl")} == mine
    fresh = kept / "run-1"
    assert f"note: --keep: the logs and requests are kept in {fresh}" in out
    assert sorted(p.name for p in fresh.iterdir()) == [
        "plain-turns.session-prefix.jsonl",
        "plain-turns.session-prefix.requests.jsonl",
    ]
    status, out, err = reqfold_here(
        *("run", "--only", "scenarios", "--scenario", "plain-turns"),
        *("--revision", "session-prefix", "--keep", str(kept)),
    )
    assert status == 0, out + err
    assert f"note: --keep: the logs and requests are kept in {kept / 'run-2'}" in out
