"""``reqfold probe`` writes the reports ``reqfold run`` writes (docs/reports.md,
"A probe's report"): the same four formats of the same model, its checks
in the part ``probe``, its sessions' requests as cache traces.

The harnesses are real child processes (``bad_probe_harnesses/`` and the
reference chat) against the fake on 127.0.0.1; ``reqfold probe`` is
called in the test's process (`cli_in_process`).
"""

from __future__ import annotations

import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from probe_reports import checks_by_id, problems, read_probe_report

from reqfold.conformance.report.json_report import schema_problems

ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parent / "bad_probe_harnesses"
PYTHON = shlex.quote(sys.executable)
CHAT = f"{PYTHON} -m reqfold.reference.chat"
KEYS = ("--base-url-env", "OPENAI_BASE_URL", "--api-key-env", "OPENAI_API_KEY")


def probe(*args: str) -> tuple[int, str, str]:
    """``reqfold probe ARGS`` with the fake's URL and key in the environment."""
    return reqfold_here("probe", *KEYS, *args, env={"PYTHONPATH": str(ROOT)})


def every_report(folder: Path) -> list[str]:
    """The four report options, each with its file in `folder`."""
    return [
        *("--report-json", str(folder / "probe.json")),
        *("--junit", str(folder / "probe.xml")),
        *("--report-md", str(folder / "probe.md")),
        *("--report-html", str(folder / "probe.html")),
    ]


@pytest.mark.slow
@pytest.mark.spec("REQ-1")
def test_each_format_of_a_bad_harness_s_probe_names_its_failing_check(
    tmp_path: Path,
) -> None:
    harness = f"{PYTHON} {shlex.quote(str(BAD / 'rewrites_history.py'))}"
    status, out, err = probe(
        "--cmd", f"{harness} --log-dir {{log_dir}}", *every_report(tmp_path)
    )
    assert status == 1, out + err
    report = read_probe_report(tmp_path / "probe.json")
    failed = problems(report)["log/REQ-1"]
    assert (failed["part"], failed["status"], failed["rules"]) == (
        "probe",
        "fail",
        ["REQ-1"],
    )
    assert report["command"] == f"{harness} --log-dir {{log_dir}}"
    root = ET.parse(tmp_path / "probe.xml").getroot()
    assert root.get("name") == "reqfold probe"
    case = root.find("./testsuite[@name='reqfold.probe']/testcase[@name='log/REQ-1']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert "differs from what the log rebuilds" in (failure.get("message") or "")
    markdown = (tmp_path / "probe.md").read_text(encoding="utf-8")
    assert markdown.startswith("# reqfold probe: NOT CONFORMANT")
    assert "### FAIL `log/REQ-1`" in markdown
    html = (tmp_path / "probe.html").read_text(encoding="utf-8")
    assert "<title>reqfold probe: NOT CONFORMANT" in html
    assert "log/REQ-1" in html


@pytest.mark.slow
@pytest.mark.spec("CACHE-1", "CACHE-2")
def test_a_probe_s_json_report_validates_with_its_perturbations_and_traces(
    tmp_path: Path,
) -> None:
    harness = f"{PYTHON} {shlex.quote(str(BAD / 'clock_in_system_prompt.py'))}"
    report_path = tmp_path / "probe.json"
    status, out, err = probe(
        *("--cmd", f"{harness} --log-dir {{log_dir}}"),
        *("--perturb", "fresh-session"),
        *("--report-json", str(report_path)),
    )
    assert status in (0, 1), out + err
    data = read_probe_report(report_path)  # validated there
    assert schema_problems(data) == []
    perturbed = checks_by_id(data)["perturb/fresh-session"]
    assert perturbed["status"] == "warn"
    assert perturbed["rules"] == ["CACHE-2"]
    assert perturbed["level"] == "SHOULD"
    traces = {trace["scenario"]: trace for trace in data["scenarios"]}
    assert sorted(traces) == ["fresh-session", "session"]
    main = traces["session"]["requests"]
    assert [point["broke"] for point in main] == [False, True, True]
    assert {point["firstDifference"] for point in main[1:]} == {"messages[0].content"}
    assert data["implementation"]["revisions"] == data["options"]["revisions"]
    # the fresh log's folder is deleted at exit: named on the terminal only
    assert "fresh session's log: " in out
    assert not [note for note in data["notes"] if "fresh session's log" in note]


@pytest.mark.parametrize(
    ("reports", "says"),
    [
        (["--report-json", "{tmp}/no-such-folder/r.json"], "does not exist"),
        (["--junit", "{tmp}"], "is a folder, not a file"),
        (["--report-json", "{tmp}/r", "--report-md", "{tmp}/r"], "--report-json names"),
        (["--report-html", " "], "--report-html is empty"),
    ],
    ids=["missing folder", "folder", "one file twice", "empty"],
)
def test_a_bad_report_path_is_refused_before_the_harness_starts(
    tmp_path: Path, reports: list[str], says: str
) -> None:
    started = tmp_path / "started"
    script = f"open({str(started)!r}, 'w')"
    harness = f"{PYTHON} -c {shlex.quote(script)}"
    given = [word.replace("{tmp}", str(tmp_path)) for word in reports]
    status, out, err = probe("--cmd", harness, "--ready", "> ", *given)
    assert status == 2, out + err
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("reqfold probe: --")
    assert says in line
    assert not started.exists()


@pytest.mark.slow
def test_a_report_that_cannot_be_written_at_the_end_says_so_and_exits_two(
    tmp_path: Path,
) -> None:
    # /dev/full takes the open the paths are checked with, and fails the write
    status, out, err = probe(
        *("--cmd", f"{CHAT} --log-dir {{log_dir}}"),
        *("--report-json", "/dev/full", "--junit", str(tmp_path / "probe.xml")),
    )
    assert status == 2, out + err
    assert "Verdict: CONFORMANT" in out  # the verdict is printed before
    (line,) = err.splitlines()
    assert line.startswith("reqfold probe: --report-json '/dev/full' cannot be written")
    root = ET.parse(tmp_path / "probe.xml").getroot()  # the other is written
    assert root.get("name") == "reqfold probe"


@pytest.mark.slow
@pytest.mark.spec("REQ-1")
def test_compare_reads_two_probe_reports_and_finds_the_regression(
    tmp_path: Path,
) -> None:
    bad = f"{PYTHON} {shlex.quote(str(BAD / 'rewrites_history.py'))}"
    for name, harness in (("bad", bad), ("good", CHAT)):
        command = f"{harness} --log-dir {{log_dir}}"
        report = str(tmp_path / f"{name}.json")
        status, out, err = probe("--cmd", command, "--report-json", report)
        assert status in (0, 1), out + err
    good, broken = str(tmp_path / "good.json"), str(tmp_path / "bad.json")
    status, out, err = reqfold_here("compare", broken, good)
    assert status == 0, out + err  # the harness fixed: no regression
    assert "pass  log/REQ-1  [REQ-1]  (was fail)" in out
    status, out, err = reqfold_here("compare", good, broken)
    assert status == 1, out + err
    assert "newly failing: " in out
    assert "log/REQ-1" in out.split("newly failing: ", 1)[1].split("\n\n", 1)[0]


@pytest.mark.slow
def test_compare_refuses_a_probe_s_report_against_a_run_s_with_one_line(
    tmp_path: Path,
) -> None:
    # fails before the fix: every check of one was missing from the other
    probed, ran = str(tmp_path / "probe.json"), str(tmp_path / "run.json")
    command = f"{CHAT} --log-dir {{log_dir}}"
    status, out, err = probe("--cmd", command, "--report-json", probed)
    assert status == 0, out + err
    scenario = ("--only", "scenarios", "--scenario", "plain-turns")
    status, out, err = reqfold_here(
        "run", *scenario, "--revision", "session-prefix", "--report-json", ran
    )
    assert status == 0, out + err
    for old, new in ((ran, probed), (probed, ran)):
        status, out, err = reqfold_here("compare", old, new)
        assert status == 2, out + err
        assert out == ""
        assert err.strip().splitlines() == [
            f"reqfold compare: {probed} is a probe's report and {ran} a run's:"
            " compare two probes' reports or two runs'"
        ]
