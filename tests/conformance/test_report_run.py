"""``reqfold run`` reports: every format from real runs, against the reference
and against known-bad implementations (a harness from bad_harnesses/, a
codec from bad_adapters/).

The runs take the quick paths the other ``reqfold run`` tests take: one
part, the ``session-prefix`` revision, one or two scenarios. Each run the
tests of this file need is made once (module fixtures), in a temporary
folder, by ``reqfold run`` in the test's own process: the implementation
(``--impl``) is a real child process and the fake provider serves on
127.0.0.1 all the same. What only a ``reqfold`` process shows (a progress
bar on a terminal, SIGTERM, a full disk, exit statuses 0, 1 and 2 through
the documented shell recipe) is run as a child; a bad option's exit 2 is
in process too (tests/conformance/test_run_cli.py shows one from a real
process). Durations are never compared.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from processes import run_with_small_files
from terminal import reqfold_on_a_terminal

from reqfold.conformance.report.json_report import read_report, schema_problems

ROOT = Path(__file__).resolve().parents[2]
BAD_HARNESSES = ROOT / "tests" / "conformance" / "bad_harnesses"
BAD_ADAPTERS = ROOT / "tests" / "conformance" / "bad_adapters"
REVISION = "session-prefix"
SLIDING = shlex.join([sys.executable, str(BAD_HARNESSES / "silent_sliding_window.py")])
"""Drops the oldest messages silently: plain-turns' third request breaks the
cache (CACHE-1) and the log's rebuild (REQ-1)."""
DROPS_REMOVALS = shlex.join(
    [sys.executable, str(BAD_ADAPTERS / "drops_tool_removals.py")]
)
SESSION_PREFIX_ONLY = shlex.join(
    [sys.executable, str(BAD_ADAPTERS / "declares_session_prefix_only.py")]
)
CACHE_CHECK = f"plain-turns@{REVISION}/cache/request-2"
LOG_CHECK = f"plain-turns@{REVISION}/log/REQ-1"
RUN_TIMEOUT = 180


@dataclass(frozen=True, slots=True)
class Run:
    """One ``reqfold run`` with every report written."""

    status: int
    stdout: str
    stderr: str
    folder: Path

    @property
    def json(self) -> dict[str, object]:
        data: dict[str, object] = json.loads((self.folder / "run.json").read_text())
        return data

    def text(self, name: str) -> str:
        return (self.folder / name).read_text(encoding="utf-8")


def reqfold_run(folder: Path, *args: str) -> Run:
    """``reqfold run ARGS`` in this process (what ``--impl`` names is a child)."""
    folder.mkdir(parents=True, exist_ok=True)
    reports = [
        *("--report-json", str(folder / "run.json")),
        *("--junit", str(folder / "run.xml")),
        *("--report-md", str(folder / "run.md")),
        *("--report-html", str(folder / "run.html")),
    ]
    status, out, err = reqfold_here("run", *args, *reports, cwd=ROOT)
    return Run(status, out, err, folder)


SCENARIO_RUN = (
    "--only",
    "scenarios",
    "--revision",
    REVISION,
    "--scenario",
    "plain-turns",
)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The reference's harness adapter (a child process) on plain-turns and vectors."""
    folder = tmp_path_factory.mktemp("reference")
    return reqfold_run(folder, "--only", "vectors", *SCENARIO_RUN)


@pytest.fixture(scope="module")
def sliding(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return reqfold_run(
        tmp_path_factory.mktemp("sliding"), "--impl", SLIDING, *SCENARIO_RUN
    )


@pytest.fixture(scope="module")
def broken_codec(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return reqfold_run(
        tmp_path_factory.mktemp("codec"),
        *("--impl", DROPS_REMOVALS, "--only", "vectors", "--revision", REVISION),
    )


@pytest.fixture(scope="module")
def skipping(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """An implementation that declares one revision: the others' vectors skip."""
    return reqfold_run(
        tmp_path_factory.mktemp("skipping"),
        *("--impl", SESSION_PREFIX_ONLY, "--only", "vectors"),
    )


def checks_of(run: Run) -> list[dict[str, object]]:
    checks = run.json["checks"]
    assert isinstance(checks, list)
    return checks


def check(run: Run, check_id: str) -> dict[str, object]:
    found = [item for item in checks_of(run) if item["id"] == check_id]
    assert len(found) == 1, f"{check_id} not in the report"
    return found[0]


def without_durations(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration"}
    if isinstance(value, list):
        return [without_durations(item) for item in value]
    return value


# ------------------------------------------------------------ the JSON report


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reference", "sliding", "broken_codec", "skipping"])
def test_every_json_report_of_a_real_run_validates_against_the_schema(
    name: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(name)
    assert "Traceback" not in run.stderr, run.stderr
    data = run.json
    assert schema_problems(data) == []
    assert read_report(run.text("run.json")) == data
    assert data["format"] == "reqfold-run/1"
    verdict = data["verdict"]
    assert isinstance(verdict, dict)
    assert verdict["exitStatus"] == run.status
    assert f"Verdict: {verdict['text']}" in run.stdout


@pytest.mark.slow
def test_the_json_report_names_the_suite_the_implementation_and_every_check(
    reference: Run,
) -> None:
    assert reference.status == 0, reference.stdout
    data = reference.json
    suite = data["suite"]
    assert isinstance(suite, dict)
    assert str(suite["digest"]).startswith("sha256:")
    assert suite["vectorFiles"] > 0
    assert suite["scenarioFiles"] > 0
    implementation = data["implementation"]
    assert isinstance(implementation, dict)
    assert implementation["name"] == "reqfold-reference"
    assert "harness" in implementation["capabilities"]
    checks = checks_of(reference)
    printed = reference.stdout.split("\nscenarios ")[1].split(" checks")[0]
    assert sum(1 for c in checks if c["part"] == "scenarios") == int(printed)
    assert {c["part"] for c in checks} == {"vectors", "scenarios"}
    assert all(c["status"] == "pass" for c in checks)
    assert all(c["rules"] and c["level"] in ("MUST", "SHOULD") for c in checks)


@pytest.mark.slow
def test_two_runs_of_the_reference_give_the_same_report_but_for_durations(
    reference: Run, tmp_path: Path
) -> None:
    again = reqfold_run(tmp_path, "--only", "vectors", *SCENARIO_RUN)
    first, second = without_durations(reference.json), without_durations(again.json)
    assert first == second


@pytest.mark.slow
@pytest.mark.spec("CACHE-1")
def test_a_cache_failure_is_reproduced_with_its_step_and_the_fakes_first_divergence(
    sliding: Run,
) -> None:
    assert sliding.status == 1
    failed = check(sliding, CACHE_CHECK)
    assert failed["status"] == "fail"
    repro = failed["reproduction"]
    assert isinstance(repro, dict)
    assert repro["kind"] == "scenario"
    assert "--scenario plain-turns" in repro["command"]
    assert SLIDING in repro["command"] or "silent_sliding_window" in repro["command"]
    subject = repro["subject"]
    # request 2 left in the third send: the steps up to it are the reproduction
    assert subject["step"] == 3
    assert subject["steps"][-1]["send"] == "Thanks."
    assert repro["expected"] == {"relation": ["append", "repeat"], "closest": 1}
    assert repro["found"]["relation"] == "diverged"
    assert repro["firstDifference"] == "messages[1].content"


@pytest.mark.slow
@pytest.mark.spec("REQ-1")
def test_a_log_failure_is_reproduced_with_where_the_log_and_the_request_differ(
    sliding: Run,
) -> None:
    failed = check(sliding, LOG_CHECK)
    repro = failed["reproduction"]
    assert isinstance(repro, dict)
    assert repro["firstDifference"] == "messages[1].content"
    assert repro["expected"]["value"] == '"Hello."'
    assert repro["found"]["value"] == '"Which store is this?"'


@pytest.mark.slow
@pytest.mark.spec("TOOLS-4")
def test_a_failing_vector_is_reproduced_with_its_params_expectation_and_answer(
    broken_codec: Run,
) -> None:
    assert broken_codec.status == 1
    failed = check(broken_codec, f"{REVISION}/apply-tools-removed")
    repro = failed["reproduction"]
    assert isinstance(repro, dict)
    assert repro["kind"] == "vector"
    assert repro["subject"]["method"] == "codec/apply"
    assert repro["subject"]["params"]["delta"]["tools"]["removed"] == ["b"]
    expected_tools = repro["expected"]["result"]["header"]["tools"]
    found_tools = repro["found"]["result"]["header"]["tools"]
    assert [t["name"] for t in expected_tools] == ["a", "c"]
    assert [t["name"] for t in found_tools] == ["a", "b", "c"]
    assert repro["firstDifference"] == "$.result.header.tools[1].name"


@pytest.mark.slow
def test_the_cache_trace_holds_each_requests_tokens_and_where_the_cache_broke(
    reference: Run, sliding: Run
) -> None:
    for run, broken in ((reference, []), (sliding, [2])):
        traces = run.json["scenarios"]
        assert isinstance(traces, list)
        (trace,) = traces
        requests = trace["requests"]
        assert [r["position"] for r in requests] == [0, 1, 2]
        for point in requests:
            assert (
                point["cachedTokens"] + point["uncachedTokens"] == point["promptTokens"]
            )
        assert trace["cachedTokens"] == sum(r["cachedTokens"] for r in requests)
        assert [r["position"] for r in requests if r["broke"]] == broken
    point = sliding.json["scenarios"][0]["requests"][2]  # type: ignore[index]
    assert point["relation"] == "diverged"
    assert "messages[1].content" in point["why"]
    assert point["check"] == CACHE_CHECK
    assert point["checkStatus"] == "fail"


# ------------------------------------------------------------ JUnit, Markdown


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reference", "sliding", "skipping"])
def test_junit_has_one_testcase_per_check_with_its_rules_as_properties(
    name: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(name)
    root = ET.fromstring(run.text("run.xml"))
    cases = root.findall("./testsuite/testcase")
    checks = {c["id"]: c for c in checks_of(run)}
    assert sorted(case.get("name") or "" for case in cases) == sorted(checks)
    for case in cases:
        item = checks[case.get("name") or ""]
        rules = [
            p.get("value") for p in case.findall("./properties/property[@name='rule']")
        ]
        assert rules == item["rules"]
        failed = case.find("failure") is not None
        assert failed == (item["status"] in ("fail", "xpass"))
        skipped = case.find("skipped")
        assert (skipped is not None) == (item["status"] in ("skip", "xfail"))
        if skipped is not None and item["status"] == "skip":
            assert skipped.get("message") == item["reason"]


@pytest.mark.slow
def test_a_junit_failure_carries_the_message_and_the_reproduction(sliding: Run) -> None:
    root = ET.fromstring(sliding.text("run.xml"))
    case = root.find(f"./testsuite/testcase[@name='{CACHE_CHECK}']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert "does not extend the previous request" in (failure.get("message") or "")
    assert "first difference: messages[1].content" in (failure.text or "")
    assert "reproduce: reqfold run" in (failure.text or "")


@pytest.mark.slow
def test_the_markdown_summary_gives_the_verdict_counts_problems_and_cache(
    reference: Run, sliding: Run
) -> None:
    text = reference.text("run.md")
    assert text.startswith("# reqfold run: CONFORMANT")
    assert "## Problems" not in text
    counts = reference.json["parts"]
    assert isinstance(counts, dict)
    vectors = counts["vectors"]
    assert f"| vectors | {sum(vectors.values())} | {vectors['pass']} |" in text
    bad = sliding.text("run.md")
    assert bad.startswith("# reqfold run: NOT CONFORMANT")
    assert f"### FAIL `{CACHE_CHECK}`" in bad
    assert "first difference at `messages[1].content`" in bad
    trace = sliding.json["scenarios"][0]  # type: ignore[index]
    assert (
        f"| plain-turns | {REVISION} | 3 | {trace['promptTokens']}"
        f" | {trace['cachedTokens']} |" in bad
    )
    assert "request 2 (FAIL)" in bad


@pytest.mark.slow
def test_skips_carry_their_reason_in_every_report(skipping: Run) -> None:
    skipped = [c for c in checks_of(skipping) if c["status"] == "skip"]
    assert skipped
    reason = "the implementation does not declare header-events"
    one = next(c for c in skipped if str(c["id"]).startswith("header-events/"))
    assert one["reason"] == reason
    assert all(c["reason"] for c in skipped)
    assert f"`{one['id']}` skipped: {reason}" in skipping.text("run.md")
    assert f'data-skip="{one["id"]}"' in skipping.text("run.html")
    assert reason in skipping.text("run.html")
    root = ET.fromstring(skipping.text("run.xml"))
    case = root.find(f"./testsuite/testcase[@name='{one['id']}']/skipped")
    assert case is not None
    assert case.get("message") == reason


# ------------------------------------------------------------ expected failures


def write_expected(folder: Path, entries: dict[str, object]) -> Path:
    path = folder / "expected.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


@pytest.mark.slow
def test_expected_failures_that_fail_are_xfail_and_the_run_passes(
    tmp_path: Path,
) -> None:
    path = write_expected(
        tmp_path,
        {
            CACHE_CHECK: {"reason": "issue 7: the window drops old turns"},
            LOG_CHECK: {"reason": "issue 7 as well"},
        },
    )
    run = reqfold_run(
        tmp_path / "out",
        *("--impl", SLIDING, *SCENARIO_RUN, "--expected-failures", str(path)),
    )
    assert run.status == 0, run.stdout
    assert f"xfail: {CACHE_CHECK}: issue 7: the window drops old turns" in run.stdout
    # not a problem: the rule is listed with its expected failure, and no
    # "Problems" block is printed above the verdict
    assert re.search(r"\n  CACHE-1 +MUST +\d+ +0 +0 +0 +1 +0\n", run.stdout), run.stdout
    assert "\nProblems" not in run.stdout
    assert f"FAIL   scenarios  {CACHE_CHECK}" not in run.stdout
    item = check(run, CACHE_CHECK)
    assert item["status"] == "xfail"
    assert item["reason"] == "issue 7: the window drops old turns"
    assert item["reproduction"] is not None
    assert run.json["counts"]["xfail"] == 2  # type: ignore[index]
    assert "issue 7: the window drops old turns" in run.text("run.md")
    assert f'data-xfail="{CACHE_CHECK}"' in run.text("run.html")
    root = ET.fromstring(run.text("run.xml"))
    skipped = root.find(f"./testsuite/testcase[@name='{CACHE_CHECK}']/skipped")
    assert skipped is not None
    assert "issue 7" in (skipped.get("message") or "")


@pytest.mark.slow
def test_an_expected_failure_that_passes_is_stale_and_fails_the_run(
    tmp_path: Path,
) -> None:
    path = write_expected(tmp_path, {CACHE_CHECK: {"reason": "fixed long ago"}})
    run = reqfold_run(tmp_path / "out", *SCENARIO_RUN, "--expected-failures", str(path))
    assert run.status == 1, run.stdout
    assert "STALE" in run.stdout
    assert "an expected failure passed" in run.stdout
    # every check conforms: the words say the list is stale, not the harness
    assert "Verdict: STALE EXPECTED FAILURE: every check conforms" in run.stdout
    assert "NOT CONFORMANT" not in run.stdout
    assert check(run, CACHE_CHECK)["status"] == "xpass"
    root = ET.fromstring(run.text("run.xml"))
    failure = root.find(f"./testsuite/testcase[@name='{CACHE_CHECK}']/failure")
    assert failure is not None
    assert "stale expected failure" in (failure.get("message") or "")


@pytest.mark.slow
def test_an_expected_failure_naming_no_check_of_a_run_that_played_is_an_error(
    tmp_path: Path,
) -> None:
    missing = f"plain-turns@{REVISION}/cache/request-9"
    path = write_expected(tmp_path, {missing: {"reason": "typo"}})
    run = reqfold_run(tmp_path / "out", *SCENARIO_RUN, "--expected-failures", str(path))
    assert run.status == 2
    assert missing in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert run.json["verdict"]["exitStatus"] == 2  # type: ignore[index]


@pytest.mark.slow
def test_an_expected_failure_of_a_profile_left_out_of_the_verdict_is_not_used(
    tmp_path: Path,
) -> None:
    strict_case = f"{REVISION}/canonical-rejects-non-object-header"
    path = write_expected(tmp_path, {strict_case: {"reason": "we validate nothing"}})
    lenient = shlex.join([sys.executable, str(BAD_ADAPTERS / "validates_nothing.py")])
    run = reqfold_run(
        tmp_path / "out",
        *("--impl", lenient, "--only", "vectors", "--revision", REVISION),
        *("--expected-failures", str(path)),
    )
    assert run.status == 0, run.stdout + run.stderr
    assert "strict input validation:" in run.stdout
    assert strict_case not in {item["id"] for item in checks_of(run)}


@pytest.mark.slow
def test_a_reproduction_carries_the_profile_the_run_was_given(tmp_path: Path) -> None:
    lenient = shlex.join([sys.executable, str(BAD_ADAPTERS / "validates_nothing.py")])
    run = reqfold_run(
        tmp_path / "out",
        *("--impl", lenient, "--only", "vectors", "--revision", REVISION),
        *("--profile", "strict"),
    )
    assert run.status == 1, run.stdout
    failed = next(item for item in checks_of(run) if item["status"] == "fail")
    command = failed["reproduction"]["command"]  # type: ignore[index]
    assert "--profile strict" in command


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("not json", "is not JSON"),
        ("[]", "must be a JSON object keyed by check id"),
        ('{"session-prefix/apply-tools-removed": "why"}', 'non-empty "reason"'),
        (
            '{"session-prefix/apply-tools-removed": {"reason": " "}}',
            'non-empty "reason"',
        ),
        (
            '{"session-prefix/apply-tools-removed": {"reason": "x", "until": 3}}',
            "unknown member(s): until",
        ),
        ('{"no-such-check": {"reason": "x"}}', "names no check of this suite"),
        ('{"no-such-scenario@session-prefix/log/REQ-1": {"reason": "x"}}', "no-such"),
        ('{"plain-turns@final/log/REQ-1": {"reason": "x"}}', "names no check"),
    ],
)
def test_a_bad_expected_failures_file_exits_2_with_one_line_and_no_run(
    tmp_path: Path, content: str, complaint: str
) -> None:
    path = tmp_path / "expected.json"
    path.write_text(content, encoding="utf-8")
    status, _, err = reqfold_here(
        "run",
        *("--impl", str(tmp_path / "never-started")),
        *("--expected-failures", str(path)),
        cwd=ROOT,
    )
    assert status == 2
    assert complaint in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_a_report_into_a_missing_folder_exits_2_before_running(tmp_path: Path) -> None:
    status, _, err = reqfold_here(
        "run",
        *("--impl", str(tmp_path / "never-started")),
        *("--report-html", str(tmp_path / "no" / "such" / "run.html")),
        cwd=ROOT,
    )
    assert status == 2
    assert "--report-html" in err
    assert "does not exist" in err
    assert len(err.strip().splitlines()) == 1


def test_a_report_into_a_folder_that_is_not_writable_exits_2_before_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as root every folder is writable: the folder's refusal is faked
    real_access = os.access
    folder = str(tmp_path / "ro")
    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(
        os, "access", lambda path, mode: str(path) != folder and real_access(path, mode)
    )
    target = f"{folder}/run.json"
    status, out, err = reqfold_here(
        "run", "--impl", "reference", "--report-json", target
    )
    assert status == 2
    assert out == ""
    assert err == f"reqfold run: --report-json {target!r}: its folder is not writable\n"


def test_a_report_under_a_file_says_the_folder_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a file\n")
    target = str(tmp_path / "f.txt" / "run.json")
    status, out, err = reqfold_here(
        "run", "--impl", "reference", "--report-json", target
    )
    assert status == 2
    assert out == ""
    assert err == (
        f"reqfold run: --report-json {target!r}: the folder"
        f" {str(tmp_path / 'f.txt')!r} is a file\n"
    )


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        (("--report-json", "same.json", "--junit", "same.json"), "--junit"),
        (
            ("--expected-failures", "mine.json", "--report-md", "mine.json"),
            "--report-md",
        ),
    ],
)
def test_two_outputs_into_one_file_exit_2_and_the_file_is_untouched(
    tmp_path: Path, options: tuple[str, ...], complaint: str
) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text("{}", encoding="utf-8")
    status, out, err = reqfold_here("run", "--only", "vectors", *options, cwd=tmp_path)
    assert status == 2, out + err
    assert complaint in err
    assert "give another" in err
    assert mine.read_text(encoding="utf-8") == "{}"
    assert not (tmp_path / "same.json").exists()


# ------------------------------------------------------------ the progress bar


def run_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal; returns the status and what it showed."""
    return reqfold_on_a_terminal("run", *args, stream="stderr", timeout=RUN_TIMEOUT)


QUICK = (
    *("--impl", shlex.join([sys.executable, "-m", "reqfold.reference.adapter"])),
    *("--only", "vectors", "--revision", REVISION),
)
"""One revision's vectors against the reference's codec adapter, whose
process starts in a third of the time its harness adapter takes."""


@pytest.mark.slow
def test_a_terminal_shows_a_progress_bar_that_reaches_the_end() -> None:
    status, shown = run_on_a_terminal(*QUICK)
    assert status == 0
    assert "] 100%  vectors" in shown
    assert "\r\x1b[K" in shown
    assert shown.endswith("\r\x1b[K")  # cleared before the summary


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [
        pytest.param("quiet", id="--quiet on a terminal"),
        pytest.param("pipe", id="a pipe"),
    ],
)
def test_no_progress_bar_with_quiet_or_off_a_terminal(mode: str) -> None:
    if mode == "quiet":
        status, shown = run_on_a_terminal(*QUICK, "--quiet")
    else:
        done = subprocess.run(
            [sys.executable, "-m", "reqfold.conformance.cli", "run", *QUICK],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
            cwd=ROOT,
        )
        status, shown = done.returncode, done.stderr
    assert status == 0
    assert "%  vectors" not in shown
    assert "\r" not in shown


# ------------------------------------------------------------ the CI recipe


def shell_recipe() -> str:
    docs = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    return docs.split("```sh\n", 1)[1].split("```", 1)[0]


def sh(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """`script` in `folder`, with a ``reqfold`` on PATH that runs this checkout."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "reqfold").write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} "
        '-m reqfold.conformance.cli "$@"\n'
    )
    (bin_dir / "reqfold").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        ["sh", "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("adapter", "baseline", "status"),
    [
        pytest.param(
            ["-m", "reqfold.reference.adapter"], None, 0, id="a conformant codec"
        ),
        pytest.param(
            [str(BAD_ADAPTERS / "drops_tool_removals.py")], None, 1, id="a broken codec"
        ),
        pytest.param(
            ["-m", "reqfold.reference.adapter"],
            "{}",
            2,
            id="conformant, unreadable baseline",
        ),
    ],
)
def test_the_documented_shell_recipe_keeps_the_reports_and_gates_on_the_status(
    tmp_path: Path, adapter: list[str], baseline: str | None, status: int
) -> None:
    """The recipe as written, reqfold already installed (there is no network
    here): its install line is skipped and the run limited to the vectors of
    one revision; nothing else changes."""
    script = shell_recipe()
    install = next(line for line in script.splitlines() if "pip install" in line)
    script = script.replace(install, ": installed").replace(
        'reqfold run --impl "./my-adapter"',
        'reqfold run --impl "./my-adapter" --only vectors --revision session-prefix',
    )
    assert "--only vectors" in script
    command = shlex.join([sys.executable, *adapter])
    (tmp_path / "my-adapter").write_text(f"#!/bin/sh\nexec {command}\n")
    (tmp_path / "my-adapter").chmod(0o755)
    if baseline is not None:
        (tmp_path / "baseline.json").write_text(baseline)
    done = sh(script, tmp_path)
    assert done.returncode == status, done.stdout + done.stderr
    assert f"reqfold: exit status {status}" in done.stdout
    for name in ("run.json", "junit.xml", "summary.md", "report.html"):
        assert (tmp_path / "reports" / name).is_file()


@pytest.mark.slow
def test_an_implementation_that_does_not_start_still_gets_every_report(
    tmp_path: Path,
) -> None:
    run = reqfold_run(tmp_path, "--impl", str(tmp_path / "no-such-adapter"))
    assert run.status == 3
    data = run.json
    assert schema_problems(data) == []
    assert "cannot start" in str(data["startupError"])
    assert data["checks"] == []
    root = ET.fromstring(run.text("run.xml"))
    error = root.find("./testsuite/testcase[@name='initialize']/error")
    assert error is not None
    assert "did not start" in (error.get("message") or "")
    assert "did not start" in run.text("run.md")
    assert "did not start" in run.text("run.html")
    assert "<p>None.</p>" not in run.text("run.html")  # not a clean run
    assert "None: nothing was checked (the implementation did not start)." in (
        run.text("run.html")
    )


@pytest.mark.slow
@pytest.mark.spec("TOOLS-4")
def test_a_failing_property_is_reproduced_by_its_shrunk_counterexample(
    tmp_path: Path,
) -> None:
    run = reqfold_run(
        tmp_path,
        *("--impl", DROPS_REMOVALS, "--only", "properties", "--revision", REVISION),
        *("--examples", "20"),
    )
    assert run.status == 1, run.stdout
    failed = [c for c in checks_of(run) if c["status"] == "fail"]
    assert failed
    for item in failed:
        repro = item["reproduction"]
        assert isinstance(repro, dict)
        assert repro["kind"] == "property"
        vector = repro["subject"]["vector"]
        assert repro["expected"] == vector["expect"]
        # the implementation's own answer to the counterexample, kept as it came
        assert repro["found"] is not None
        assert repro["found"] != repro["expected"]
        assert str(repro["firstDifference"]).startswith("$")
        assert "--only properties" in repro["command"]


@pytest.mark.slow
def test_an_interrupted_run_still_writes_the_checks_that_ran(tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "reqfold.conformance.cli", "run", "--show", "all"),
            *("--only", "vectors", "--only", "properties", "--examples", "100000"),
            *("--report-json", str(report)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    seen = 0
    for line in process.stdout:  # the vectors' lines, then the properties work
        seen += line.lstrip().startswith("pass ")
        if seen >= 10:
            break
    process.terminate()
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("reqfold run did not stop on SIGTERM")
    assert process.returncode == 143
    assert "Traceback" not in err
    data = json.loads(report.read_text())
    assert schema_problems(data) == []
    assert data["verdict"]["exitStatus"] == 143
    assert "interrupted" in data["verdict"]["text"]
    assert len(data["checks"]) >= seen


VECTORS_ONLY = ("--impl", "reference", "--only", "vectors", "--quiet", "--report-json")


@pytest.mark.slow
def test_a_report_that_cannot_be_written_whole_leaves_the_previous_one(
    tmp_path: Path,
) -> None:
    # RLIMIT_FSIZE in the child stands in for a full disk: the report is
    # larger than 64 KiB, so its write fails half-way
    report = tmp_path / "run.json"
    report.write_text('{"previous": true}\n')

    done = run_with_small_files(
        [
            sys.executable,
            "-m",
            "reqfold.conformance.cli",
            "run",
            *VECTORS_ONLY,
            str(report),
        ],
        65536,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        f"reqfold run: --report-json {str(report)!r} cannot be written:"
        " File too large\n"
    )
    assert report.read_text() == '{"previous": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
