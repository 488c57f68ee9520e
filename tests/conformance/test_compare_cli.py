"""``reqfold compare OLD.json NEW.json``: regressions between two real run reports.

The reports come from real runs of plain-turns (``session-prefix``): the
reference's harness adapter, and a known-bad harness whose silent sliding
window breaks the cache on the third request. ``reqfold`` runs in the
test's own process (the harnesses are child processes all the same), but
for a regression's exit 1 and bad input's exit 2, shown by a ``reqfold``
child process too.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import commands
import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.report.compare import compare_reports

ROOT = Path(__file__).resolve().parents[2]
SLIDING = shlex.join(
    [
        sys.executable,
        str(ROOT / "tests/conformance/bad_harnesses/silent_sliding_window.py"),
    ]
)
SCENARIO_RUN = (
    *("--only", "scenarios", "--revision", "session-prefix"),
    *("--scenario", "plain-turns"),
)
CACHE_CHECK = "plain-turns@session-prefix/cache/request-2"


def reqfold_child(*args: str) -> subprocess.CompletedProcess[str]:
    """``reqfold ARGS`` as a child process, as a user runs it."""
    status, out, err = commands.reqfold(*args, timeout=180, cwd=ROOT)
    return subprocess.CompletedProcess(["reqfold", *args], status, out, err)


def reqfold(*args: str) -> subprocess.CompletedProcess[str]:
    """``reqfold ARGS`` in this process (a harness ``--impl`` names is a child)."""
    status, out, err = reqfold_here(*args, cwd=ROOT)
    return subprocess.CompletedProcess(["reqfold", *args], status, out, err)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("reports")
    good, bad = folder / "good.json", folder / "bad.json"
    done = reqfold("run", *SCENARIO_RUN, "--report-json", str(good))
    assert done.returncode == 0, done.stdout
    done = reqfold("run", "--impl", SLIDING, *SCENARIO_RUN, "--report-json", str(bad))
    assert done.returncode == 1, done.stdout
    return {"good": good, "bad": bad}


@pytest.mark.slow
@pytest.mark.spec("CACHE-1")
def test_a_newly_failing_check_and_a_lower_hit_ratio_are_a_regression(
    reports: dict[str, Path],
) -> None:
    done = reqfold_child("compare", str(reports["good"]), str(reports["bad"]))
    assert done.returncode == 1, done.stdout
    out = done.stdout
    assert "newly failing: 2" in out
    assert f"FAIL  {CACHE_CHECK}  [CACHE-1]  (was pass)" in out
    line = next(row for row in out.splitlines() if "plain-turns@session-prefix " in row)
    assert "LOWER" in line
    # the sliding window's break, with the tokens it lost (docs/cache.md)
    assert line.endswith("MORE BROKEN: 0 -> 1 break(s), 0 -> 64 tokens lost")
    assert "Regression: yes" in out


@pytest.mark.slow
def test_the_fix_is_newly_passing_and_no_regression(reports: dict[str, Path]) -> None:
    done = reqfold("compare", str(reports["bad"]), str(reports["good"]))
    assert done.returncode == 0, done.stdout
    assert "newly failing: 0" in done.stdout
    assert "newly passing: 2" in done.stdout
    assert f"pass  {CACHE_CHECK}  [CACHE-1]  (was fail)" in done.stdout
    assert "Regression: no" in done.stdout


@pytest.mark.slow
def test_a_report_compared_with_itself_changes_nothing(
    reports: dict[str, Path],
) -> None:
    done = reqfold("compare", str(reports["bad"]), str(reports["bad"]))
    assert done.returncode == 0
    assert "newly failing: 0\nnewly passing: 0" in done.stdout
    # unchanged ratios are one line, so the answer stays next to the counts
    assert "cache hit ratio: unchanged in the 1 scenario run" in done.stdout
    assert done.stdout.rstrip().endswith(
        "unchanged in the 1 scenario run\n\nRegression: no"
    )


@pytest.mark.slow
def test_the_hit_ratios_shown_are_the_reports_own(reports: dict[str, Path]) -> None:
    good = json.loads(reports["good"].read_text())
    bad = json.loads(reports["bad"].read_text())
    comparison = compare_reports(good, bad)
    (change,) = comparison.cache
    assert change.old == good["scenarios"][0]["hitRatio"]
    assert change.new == bad["scenarios"][0]["hitRatio"]
    assert change.new < change.old


@pytest.mark.slow
def test_a_lower_ratio_on_another_suite_is_shown_but_not_judged(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    good = json.loads(reports["good"].read_text())
    bad = json.loads(reports["good"].read_text())
    bad["suite"]["digest"] = "sha256:" + "0" * 64
    bad["scenarios"][0]["hitRatio"] = 0.1
    other = tmp_path / "other.json"
    other.write_text(json.dumps(bad))
    done = reqfold("compare", str(reports["good"]), str(other))
    assert done.returncode == 0, done.stdout
    assert "ran different suites" in done.stdout
    assert good["scenarios"][0]["hitRatio"] > 0.1


@pytest.mark.slow
@pytest.mark.spec("CACHE-1")
def test_a_lower_ratio_after_fixing_a_broken_run_is_shown_but_not_judged(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    broken = json.loads(reports["bad"].read_text())
    fixed = json.loads(reports["good"].read_text())
    broken["scenarios"][0]["hitRatio"] = 0.99  # the broken harness sent less
    old = tmp_path / "old.json"
    old.write_text(json.dumps(broken))
    done = reqfold("compare", str(old), str(reports["good"]))
    assert done.returncode == 0, done.stdout
    assert "lower (the old run broke the contract: not judged)" in done.stdout
    assert "Regression: no" in done.stdout
    assert fixed["scenarios"][0]["hitRatio"] < 0.99


@pytest.mark.slow
def test_a_new_run_that_checked_nothing_is_a_regression(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "did-not-start.json"
    never = shlex.join([sys.executable, "-c", "import sys; sys.exit(1)"])
    done = reqfold("run", "--impl", never, *SCENARIO_RUN, "--report-json", str(empty))
    assert done.returncode == 3, done.stdout
    compared = reqfold("compare", str(reports["good"]), str(empty))
    assert compared.returncode == 1, compared.stdout
    assert "newly failing: 0" in compared.stdout
    assert "verdict: was conformant (exit 0), now exit 3" in compared.stdout
    assert "Regression: yes" in compared.stdout


@pytest.mark.slow
def test_checks_missing_from_the_new_report_of_the_same_suite_are_a_regression(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    fewer = json.loads(reports["good"].read_text())
    gone = fewer["checks"].pop()
    shorter = tmp_path / "fewer.json"
    shorter.write_text(json.dumps(fewer))
    done = reqfold("compare", str(reports["good"]), str(shorter))
    assert done.returncode == 1, done.stdout
    assert "missing from the new report: 1" in done.stdout
    assert gone["id"] in done.stdout
    fewer["suite"]["digest"] = "sha256:" + "0" * 64  # another suite: not judged
    shorter.write_text(json.dumps(fewer))
    done = reqfold("compare", str(reports["good"]), str(shorter))
    assert done.returncode == 0, done.stdout
    assert "(different suites: not judged)" in done.stdout


@pytest.mark.slow
def test_a_scenario_runs_error_gone_with_its_fix_is_no_regression(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    hung = json.loads(reports["good"].read_text())
    kept = [c for c in hung["checks"] if c["id"].startswith("plain-turns@")]
    error = {**kept[0], "id": "plain-turns@session-prefix/run", "status": "error"}
    hung["checks"].append({**error, "message": "the harness did not answer"})
    hung["verdict"]["exitStatus"] = 3
    old = tmp_path / "hung.json"
    old.write_text(json.dumps(hung))
    done = reqfold("compare", str(old), str(reports["good"]))
    assert done.returncode == 0, done.stdout
    assert "gone with their failure: 1" in done.stdout
    assert "missing from the new report: 0" in done.stdout
    assert "Regression: no" in done.stdout
    # without any check of that scenario run, the error is still missing
    fewer = json.loads(reports["good"].read_text())
    ids = {check["id"] for check in kept}
    fewer["checks"] = [c for c in fewer["checks"] if c["id"] not in ids]
    shorter = tmp_path / "without-plain-turns.json"
    shorter.write_text(json.dumps(fewer))
    done = reqfold("compare", str(old), str(shorter))
    assert f"missing from the new report: {len(kept) + 1}" in done.stdout
    assert done.returncode == 1, done.stdout


@pytest.mark.slow
def test_fixing_a_harness_that_sent_other_requests_is_no_regression(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    built_once = shlex.join(
        [
            sys.executable,
            str(ROOT / "tests/conformance/bad_harnesses/config_built_once.py"),
        ]
    )
    # the scenario that catches it (it fails the same under every revision)
    # and plain-turns, whose requests both send alike: only scenarios send
    # requests, and the other scenarios and revisions change nothing here
    caught = (
        *("--only", "scenarios", "--revision", "session-prefix"),
        *("--scenario", "model-change-between-turns", "--scenario", "plain-turns"),
    )
    old = tmp_path / "built-once.json"
    done = reqfold("run", "--impl", built_once, *caught, "--report-json", str(old))
    assert done.returncode == 1, done.stdout
    failed = {
        check["id"]
        for check in json.loads(old.read_text())["checks"]
        if check["status"] == "fail"
    }
    assert failed == {"model-change-between-turns@session-prefix/request-1"}
    good = tmp_path / "reference.json"
    done = reqfold("run", *caught, "--report-json", str(good))
    assert done.returncode == 0, done.stdout
    done = reqfold("compare", str(old), str(good))
    assert done.returncode == 0, done.stdout
    assert "newly failing: 0" in done.stdout
    assert "missing from the new report: 0" in done.stdout
    assert "requests no longer sent: " in done.stdout
    assert "Regression: no" in done.stdout
    # a request check gone while its run sent the same requests: still lost
    fewer = json.loads(good.read_text())
    gone = next(c for c in fewer["checks"] if c["id"].endswith("/cache/request-2"))
    fewer["checks"].remove(gone)
    shorter = tmp_path / "fewer.json"
    shorter.write_text(json.dumps(fewer))
    done = reqfold("compare", str(good), str(shorter))
    assert done.returncode == 1, done.stdout
    assert "missing from the new report: 1" in done.stdout
    assert "requests no longer sent" not in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("part", ["checks", "scenarios"])
def test_a_report_listing_one_check_or_trace_twice_exits_2(
    reports: dict[str, Path], tmp_path: Path, part: str
) -> None:
    # compared by id, one of the two would silently win
    doubled = json.loads(reports["good"].read_text())
    assert doubled[part], part
    doubled[part].append(doubled[part][0])
    path = tmp_path / "doubled.json"
    path.write_text(json.dumps(doubled))
    done = reqfold("compare", str(reports["good"]), str(path))
    assert done.returncode == 2, done.stdout
    assert "twice" in done.stderr
    assert str(path) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        (None, "cannot be read"),
        ("{not json", "is not JSON"),
        ('{"format": "reqfold-vectors/1"}', "is not a reqfold-run/1 report"),
        ("[1, 2]", "is not a reqfold-run/1 report"),
        pytest.param("[" * 200_000, "nested too deeply", id="deeply-nested"),
        ('{"format": "reqfold-run/1", "format": "x"}', "appears twice"),
        ('{"format": "reqfold-run/1", "duration": NaN}', "NaN is not a JSON value"),
        ('{"format": "reqfold-run/1"}', "breaks run-report.schema.json"),
        (b"\xff\xfe", "cannot be read"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(
    reports: dict[str, Path],
    tmp_path: Path,
    content: str | bytes | None,
    complaint: str,
) -> None:
    path = tmp_path / "input.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    for args in ((str(path), str(reports["good"])), (str(reports["good"]), str(path))):
        done = reqfold("compare", *args)
        assert done.returncode == 2
        assert complaint in done.stderr
        assert str(path) in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert "Traceback" not in done.stderr
        assert done.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("{not json", "is not JSON"),
        pytest.param("[" * 200_000, "nested too deeply", id="deeply-nested"),
    ],
)
def test_bad_input_given_to_a_reqfold_process_exits_2_without_a_traceback(
    reports: dict[str, Path], tmp_path: Path, content: str, complaint: str
) -> None:
    path = tmp_path / "input.json"
    path.write_text(content)
    done = reqfold_child("compare", str(reports["good"]), str(path))
    assert done.returncode == 2
    assert complaint in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
