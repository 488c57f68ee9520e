"""``reqfold probe`` driving real harness processes.

The harnesses are the reference chat front end (``python -m
reference.chat``) and its known-bad variants in ``bad_probe_harnesses/``;
the fake provider is a real uvicorn server on 127.0.0.1 started by the
probe. Nothing here is mocked. ``reqfold probe`` itself is called in the
test's process (`cli_in_process`: it saves the 0.45 s of CPU a child
``reqfold`` spends importing the suite), except where the process is what
is tested: exit statuses and stderr through ``python -m`` (the first run,
two bad arguments) and signals.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import commands
import pytest
from cli_in_process import reqfold_here
from probe_reports import checks_by_id, problems, read_probe_report
from processes import process_gone, wait_until

from reqfold.conformance.probe import driver

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parent / "bad_probe_harnesses"
PYTHON = shlex.quote(sys.executable)
CHAT = f"{PYTHON} -m reqfold.reference.chat"


def env(**extra: str) -> dict[str, str]:
    """The test's environment, with this checkout first on the import path."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def probe(
    *args: str,
    key: bool = True,
    child: bool = False,
    report: Path | None = None,
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    """``reqfold probe ARGS``, in this process or (`child`) as a child process;
    with `report`, its JSON report is written there (`probe_reports`)."""
    keys = ["--api-key-env", "OPENAI_API_KEY"] if key else []
    reports = ["--report-json", str(report)] if report is not None else []
    argv = ["probe", "--base-url-env", "OPENAI_BASE_URL", *keys, *reports, *args]
    if child:
        status, out, err = commands.reqfold(*argv, timeout=120, env=env(**extra))
        return subprocess.CompletedProcess(argv, status, out, err)
    path = env()["PYTHONPATH"]
    status, out, err = reqfold_here(*argv, env={"PYTHONPATH": path, **extra})
    return subprocess.CompletedProcess(argv, status, out, err)


def bad(name: str) -> str:
    return f"{PYTHON} {shlex.quote(str(BAD / name))} --log-dir {{log_dir}}"


HUNG = "2"
"""The --timeout of a probe whose harness leaves a turn unhandled, which the
test waits out (seconds). The same timeout bounds what the harness does
right: start (0.25 s for ``reqfold.reference.chat``, 0.6 s with six busy processes
on two cores), read its line, call the fake, log the turn."""


@pytest.mark.spec("WRITER-1", "CACHE-3", "CHECK-3", "REQ-5")
def test_the_reference_chat_passes_with_a_resume_and_its_cache_keeps_hitting(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    result = probe(
        "--cmd",
        f"{CHAT} --log-dir {{log_dir}}",
        "--resume-cmd",
        f"{CHAT} --resume {{log_path}}",
        "--show",
        "all",
        "--keep",
        str(kept),
        child=True,
        report=tmp_path / "r.json",
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "run 1: 2 of 2 turn(s) fed, 2 handled, 2 request(s); exit status 0" in out
    assert "run 2: 1 of 1 turn(s) fed, 1 handled, 1 request(s); exit status 0" in out
    assert "revision session-prefix (storage line)" in out
    # the resumed process anchors its instance, and its first request
    # extends the first process's last one (one cache for the session)
    report = read_probe_report(tmp_path / "r.json")
    checks = checks_by_id(report)
    assert (checks["anchor/run 2"]["status"], checks["anchor/run 2"]["rules"]) == (
        "pass",
        ["WRITER-1"],
    )
    assert checks["cache/request-2"]["status"] == "pass"
    assert "CACHE-3" in checks["cache/request-2"]["rules"]
    assert checks["log/REQ-1"]["status"] == "pass"
    assert problems(report) == {}
    (trace,) = report["scenarios"]
    assert [point["broke"] for point in trace["requests"]] == [False, False, False]
    assert "extends #1" in out  # the timeline says so too
    assert "cache broke" not in out
    assert report["verdict"]["text"].startswith("CONFORMANT")
    # what --keep left is a log and its capture that reqfold check accepts
    [log] = [path for path in kept.glob("*.jsonl") if path.name != "requests.jsonl"]
    status, checked, _ = reqfold_here(
        "check", str(log), "--requests", str(kept / "requests.jsonl")
    )
    assert status == 0, checked
    assert "3 steps dispatched, 3 matched to captured requests" in checked


def test_keep_never_overwrites_a_file_it_did_not_make(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "requests.jsonl").write_text("mine\n", encoding="utf-8")
    result = probe("--cmd", bad("names_its_log_requests_jsonl.py"), "--keep", str(kept))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (kept / "requests.jsonl").read_text(encoding="utf-8") == "mine\n"
    fresh = kept / "run-1"
    assert (
        "kept: the log as log-requests.jsonl and the captured requests as"
        f" requests.jsonl in {fresh}"
    ) in result.stdout
    log, capture = fresh / "log-requests.jsonl", fresh / "requests.jsonl"
    assert '"type":"session"' in log.read_text(encoding="utf-8").splitlines()[0]
    assert '"path":' in capture.read_text(encoding="utf-8").splitlines()[0]
    status, checked, _ = reqfold_here("check", str(log), "--requests", str(capture))
    assert status == 0, checked


@pytest.mark.spec("REQ-1")
def test_a_harness_that_rewrites_its_history_on_the_wire_fails_req_1(
    tmp_path: Path,
) -> None:
    result = probe("--cmd", bad("rewrites_history.py"), report=tmp_path / "r.json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = read_probe_report(tmp_path / "r.json")
    check = checks_by_id(report)["log/REQ-1"]
    assert (check["status"], check["rules"], check["level"]) == (
        "fail",
        ["REQ-1"],
        "MUST",
    )
    assert "differs from what the log rebuilds for turn 2 step 1" in check["message"]
    assert report["verdict"] == {
        "exitStatus": 1,
        "text": "NOT CONFORMANT: a MUST rule is broken",
    }


@pytest.mark.spec("CACHE-2")
def test_the_timeline_shows_where_a_clock_in_the_system_prompt_breaks_the_cache() -> (
    None
):
    result = probe("--cmd", bad("clock_in_system_prompt.py"))
    out = result.stdout
    assert result.returncode in (0, 1), out + result.stderr
    timeline = out.split("Cache, turn by turn", 1)[1].split("Rules", 1)[0]
    rows = [line for line in timeline.splitlines() if "run 1" in line]
    assert len(rows) == 3
    assert "first request" in rows[0]
    for row in rows[1:]:
        assert "cache broke: differs from" in row
        assert "at messages[0].content" in row  # the system prompt
        # the excerpt around the change shows the clock; where it starts
        # depends on which digit differs first, so match the clock's unit
        assert re.search(r"\d ns\.", row), row
    assert "total: 0 of" in timeline


@pytest.mark.spec("CHECK-3")
def test_a_harness_that_drops_its_first_line_and_exits_zero_fails(
    tmp_path: Path,
) -> None:
    result = probe(
        "--cmd", bad("ignores_first_line.py"), "--timeout", HUNG, report=tmp_path / "r"
    )
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    # the run's line is the terminal's own (no check holds it)
    assert "run 1: 1 of 3 turn(s) fed, 0 handled, 0 request(s); exit status 0" in out
    check = problems(read_probe_report(tmp_path / "r"))["run-1/turns"]
    assert (check["status"], check["rules"]) == ("fail", ["CHECK-3"])
    assert "the harness read its line, the log holds no turn/end" in check["message"]
    assert "(the harness exited 0 all the same)" in check["message"]


@pytest.mark.spec("CHECK-3", "JSONL-1")
def test_a_harness_that_writes_no_log_fails_even_though_it_answered(
    tmp_path: Path,
) -> None:
    result = probe(
        "--cmd",
        f"{PYTHON} {shlex.quote(str(BAD / 'writes_no_log.py'))}",
        "--log-dir",
        str(tmp_path),
        "--timeout",
        HUNG,
        report=tmp_path / "r.json",
    )
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    report = read_probe_report(tmp_path / "r.json")
    found = problems(report)
    assert (found["log"]["status"], found["log"]["rules"]) == (
        "fail",
        ["CHECK-3", "JSONL-1"],
    )
    assert "the harness wrote no session log" in found["log"]["message"]
    assert "no log appeared" in found["run-1/turns"]["message"]
    assert "first request" in out  # its one request is in the timeline
    (trace,) = report["scenarios"]  # and in the report's cache trace
    assert trace["requests"][0]["relation"] == "first"


@pytest.mark.spec("CHECK-3")
def test_a_hung_harness_and_its_helper_in_another_session_are_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It never exits: the grace a stuck harness gets to exit at end of input
    # (2 s) is waited out whole, so the test makes it short.
    monkeypatch.setattr(driver, "STUCK_GRACE", 0.25)
    pids = tmp_path / "pids"
    started = time.monotonic()
    result = probe(
        "--cmd",
        bad("hangs_with_escaped_grandchild.py"),
        "--timeout",
        HUNG,
        PROBE_TEST_PID_FILE=str(pids),
    )
    elapsed = time.monotonic() - started
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert f"1 of 3 turn(s) handled: turn 2 of 3 was not handled within {HUNG} s" in out
    assert "killed (it did not exit)" in out
    harness, helper = map(int, pids.read_text().split())
    assert wait_until(lambda: process_gone(harness) and process_gone(helper), 5)
    assert elapsed < 30  # a timeout, a grace and start-up; not the helper's 300 s


@pytest.mark.spec("HDR-2", "REQ-4")
def test_an_undeclared_request_messages_log_is_judged_under_its_inferred_revision(
    tmp_path: Path,
) -> None:
    result = probe(
        "--cmd",
        f"{CHAT} --log-dir {{log_dir}} --revision request-messages --no-declare",
        "--ready",
        "> ",
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "revision request-messages (inferred from line 5:" in out
    assert "run 1: 3 of 3 turn(s) fed, 3 handled, 3 request(s)" in out
    # read as the default revision instead, every header event would fail
    forced = probe(
        "--cmd",
        f"{CHAT} --log-dir {{log_dir}} --revision request-messages --no-declare",
        "--revision",
        "session-prefix",
        report=tmp_path / "forced.json",
    )
    assert forced.returncode == 1
    report = read_probe_report(tmp_path / "forced.json")
    assert report["options"]["revisions"] == ["session-prefix"]
    assert problems(report)["log/HDR-2"]["status"] == "fail"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--cmd", CHAT], "say where the harness writes its log"),
        (["--cmd", "chat 'unterminated", "--log-dir", "x"], "cannot be split"),
        (["--cmd", "", "--log-dir", "x"], "--cmd is empty"),
        (["--cmd", CHAT, "--log-dir", "x", "--turns", "/no/such/file"], "--turns"),
        (["--cmd", CHAT, "--log-dir", "x", "--timeout", "0"], "--timeout"),
        (["--cmd", CHAT, "--log-glob", ""], "--log-glob is empty"),
        (["--cmd", CHAT, "--log-dir", "x", "--keep", ""], "--keep is empty"),
        (
            ["--cmd", CHAT, "--log-dir", "x", "--perturb", "next-day,next-day"],
            "next-day is given twice",
        ),
        (["--cmd", CHAT, "--log-dir", "x", "--keep", __file__], "is a file"),
        (["--cmd", CHAT, "--log-dir", "x", "--keep", f"{__file__}/sub"], "is a file"),
        (
            ["--cmd", CHAT, "--log-dir", "x", "--api-key-env", "1BAD"],
            "is not an environment variable name",
        ),
        (["--cmd", CHAT, "--log-dir", __file__], f"--log-dir {__file__!r} is a file"),
        (["--cmd", CHAT, "--log-dir", "x", "--keep", "/proc/x/y"], "cannot be made"),
        (["--cmd", CHAT, "--log-dir", "x", "--base-url-suffix", "v1"], "starts with"),
        (
            [
                *("--cmd", CHAT, "--drive", "jsonl", "--send", '{"m": "{prompt}"}'),
                *("--turn-end", "type=end", "--ready-when", "log"),
            ],
            "--ready-when log waits for the harness's log, and none is looked for",
        ),
        (
            ["--cmd", f"{CHAT} {{prompt}}", "--log-dir", "x"],
            "--cmd holds {prompt}, which is filled in only with --drive process",
        ),
        (
            [
                "--cmd",
                CHAT,
                "--log-dir",
                "x",
                "--resume-cmd",
                f"{CHAT} {{prompt_file}}",
            ],
            "--resume-cmd holds {prompt_file}",
        ),
    ],
)
def test_bad_arguments_exit_two_with_one_line_and_no_traceback(
    args: list[str], says: str
) -> None:
    assert_bad_arguments(probe(*args), says)


def test_a_keep_folder_is_not_made_when_another_argument_is_wrong(
    tmp_path: Path,
) -> None:
    keep = tmp_path / "kept" / "deep"
    result = probe("--cmd", CHAT, "--log-dir", "x", "--ready", "", "--keep", str(keep))
    assert_bad_arguments(result, "--ready is empty")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--cmd", CHAT], "say where the harness writes its log"),
        (["--cmd", CHAT, "--log-dir", "x", "--timeout", "0"], "--timeout"),
    ],
)
def test_bad_arguments_exit_two_from_a_real_process_too(
    args: list[str], says: str
) -> None:
    assert_bad_arguments(probe(*args, child=True), says)


def assert_bad_arguments(result: subprocess.CompletedProcess[str], says: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.spec("CHECK-1", "REQ-1")
@pytest.mark.parametrize(
    ("harness", "status", "fails"),
    [(CHAT, 3, []), (bad("rewrites_history.py"), 1, ["log/REQ-1", "cache/request-1"])],
    ids=["reference", "rewrites_history"],
)
def test_a_request_over_the_fakes_body_limit_is_left_out_not_failed(
    harness: str, status: int, fails: list[str], tmp_path: Path
) -> None:
    # two small turns, then one of 33 MiB: that request is over the fake's
    # 32 MiB limit (413); it gives no verdict, and the others are judged
    turns = tmp_path / "turns.txt"
    turns.write_text("hello\nagain\n" + "x" * (33 << 20) + "\n", encoding="utf-8")
    if harness == CHAT:
        harness = f"{CHAT} --log-dir {{log_dir}}"
    report = tmp_path / "r.json"
    result = probe(
        "--cmd", harness, "--turns", str(turns), "--timeout", "30", report=report
    )
    assert result.returncode == status, result.stdout + result.stderr
    found = problems(read_probe_report(report))
    refused = found.pop("refused/request-2")
    assert (refused["status"], refused["rules"]) == ("error", ["CHECK-1"])
    assert "refused by the fake provider as too large (HTTP 413" in refused["message"]
    assert [id for id, check in found.items() if check["status"] == "fail"] == fails


def test_a_turns_file_splits_turns_between_the_first_and_the_resumed_process(
    tmp_path: Path,
) -> None:
    turns = tmp_path / "turns.txt"
    turns.write_text("# a comment\nfirst\n\n---\nsecond\nthird\n", encoding="utf-8")
    # no --api-key-env: requests are attributed to processes by arrival
    result = probe(
        "--cmd",
        f"{CHAT} --log-dir {{log_dir}}",
        "--resume-cmd",
        f"{CHAT} --resume {{log_path}}",
        "--turns",
        str(turns),
        key=False,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "run 1: 1 of 1 turn(s) fed, 1 handled, 1 request(s)" in out
    assert "run 2: 2 of 2 turn(s) fed, 2 handled, 2 request(s)" in out


def test_a_command_that_cannot_be_started_gives_no_verdict(tmp_path: Path) -> None:
    command = str(tmp_path / "no-such-harness")
    report = tmp_path / "r.json"
    result = probe("--cmd", command, "--log-dir", "x", report=report)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "the harness could not be started" in result.stdout
    assert "Rules: none judged (nothing ran)" in result.stdout  # the terminal's
    data = read_probe_report(report)
    assert data["checks"] == []
    assert data["verdict"]["exitStatus"] == 3
    assert data["verdict"]["text"].startswith("NO VERDICT")
    assert "no-such-harness" in data["startupError"]


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)]
)
def test_an_interrupt_kills_the_harness_and_everything_it_started(
    tmp_path: Path, signum: int, status: int
) -> None:
    pids = tmp_path / "pids"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reqfold.conformance.cli",
            "probe",
            "--base-url-env",
            "OPENAI_BASE_URL",
            "--cmd",
            bad("hangs_with_escaped_grandchild.py"),
            "--timeout",
            "600",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(PROBE_TEST_PID_FILE=str(pids)),
    )
    try:
        assert wait_until(lambda: pids.exists() and pids.read_text().endswith("\n"))
        harness, helper = map(int, pids.read_text().split())
        # Ending the probe scans the harness's tree before killing it, so the
        # helper (in a session of its own) is found while still its child.
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == status, err
    assert "interrupted" in err
    assert "Traceback" not in err
    assert wait_until(lambda: process_gone(harness) and process_gone(helper), 5)


@pytest.mark.spec("CHECK-3")
def test_a_harness_whose_provider_calls_fail_fails_though_it_exits_zero(
    tmp_path: Path,
) -> None:
    result = probe("--cmd", bad("provider_call_fails.py"), report=tmp_path / "r")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "run 1: 3 of 3 turn(s) fed, 3 handled, 0 request(s); exit status 0" in out
    (check,) = problems(read_probe_report(tmp_path / "r")).values()
    assert (check["status"], check["rules"]) == ("fail", ["CHECK-3"])
    assert (
        "turn(s) 1, 2, 3 of run 1 ended in the log without a request reaching the"
        " provider" in check["message"]
    )
    assert "(the harness exited 0 all the same)" in check["message"]


def test_a_harness_that_reads_ahead_and_prints_a_lot_gets_one_turn_at_a_time() -> None:
    result = probe("--cmd", bad("reads_ahead.py"))
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr
    assert "run 1: 3 of 3 turn(s) fed, 3 handled, 3 request(s); exit status 0" in out


@pytest.mark.spec("CHECK-3")
def test_a_harness_that_never_prints_its_ready_text_is_fed_nothing_and_fails_once() -> (
    None
):
    command = f"{PYTHON} {shlex.quote(str(BAD / 'never_prints_its_prompt.py'))}"
    started = time.monotonic()
    result = probe("--cmd", command, "--ready", "> ", "--timeout", HUNG)
    took = time.monotonic() - started
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "run 1: 0 of 3 turn(s) fed, 0 handled" in out
    assert f"was not ready within {HUNG} s (waited for '> ' on stdout)" in out
    assert took < 3 * float(HUNG)  # one timeout, not one per turn


@pytest.mark.spec("CHECK-3")
@pytest.mark.parametrize("pacing", [["--ready", "> "], ["--log-dir", "{log_dir}"]])
def test_a_harness_that_exits_at_start_fails_check_3_however_it_is_paced(
    pacing: list[str], tmp_path: Path
) -> None:
    command = f"{PYTHON} {shlex.quote(str(BAD / 'exits_at_start.py'))}"
    if "{log_dir}" in pacing:
        command, pacing = f"{command} --log-dir {{log_dir}}", []
    report = tmp_path / "r.json"
    result = probe("--cmd", command, *pacing, "--timeout", HUNG, report=report)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    check = problems(read_probe_report(report))["run-1/turns"]
    assert (check["status"], check["rules"]) == ("fail", ["CHECK-3"])
    assert "the harness exited (status 1)" in check["message"]
    assert "cannot load my configuration" in out  # what it printed, shown


@pytest.mark.spec("CHECK-3")
def test_turns_can_be_paced_by_the_harness_prompt_instead_of_the_log() -> None:
    result = probe("--cmd", f"{CHAT} --log-dir {{log_dir}}", "--ready", "> ")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "run 1: 3 of 3 turn(s) fed, 3 handled, 3 request(s)" in out


@pytest.mark.spec("CACHE-2", "CHECK-1")
def test_keep_pairs_each_session_s_log_with_its_own_requests(tmp_path: Path) -> None:
    result = probe(
        *("--cmd", f"{CHAT} --log-dir {{log_dir}}", "--perturb", "fresh-session"),
        *("--keep", str(tmp_path)),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "with main-requests.jsonl" in result.stdout, result.stdout
    assert "with fresh-requests.jsonl" in result.stdout, result.stdout
    logs = [path for path in tmp_path.glob("*.jsonl") if "requests" not in path.name]
    assert len(logs) == 2, logs
    for session in ("main", "fresh"):
        [log] = [p for p in logs if p.name.startswith("fresh-") == (session == "fresh")]
        capture = tmp_path / f"{session}-requests.jsonl"
        status, out, _ = reqfold_here("check", str(log), "--requests", str(capture))
        assert status == 0, (session, out)
        assert "matched to captured requests" in out


@pytest.mark.spec("CACHE-2")
def test_the_turn_by_turn_table_shows_the_fresh_session_s_request() -> None:
    result = probe(
        "--cmd", f"{CHAT} --log-dir {{log_dir}}", "--perturb", "fresh-session"
    )
    table = result.stdout.split("Cache, turn by turn", 1)[1].split("total:", 1)[0]
    assert re.search(r"^  run 2\s+4\s+#3\s", table, re.M), result.stdout
    assert "run 2 (fresh session): 1 of 1 turn(s) fed" in result.stdout


def _comparable(text: str) -> list[str]:
    """Probe output without what changes from run to run: temporary folders,
    the port, the session id, the time taken."""
    text = re.sub(r"/tmp/reqfold-probe-\w+", "/tmp/reqfold-probe-X", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    text = re.sub(r"/[0-9a-f]{32}\.jsonl", "/SESSION.jsonl", text)
    text = re.sub(r" in \d+\.\d s$", " in T s", text, flags=re.M)
    return text.splitlines()


def test_the_worked_example_in_docs_probe_md_is_the_real_output() -> None:
    docs = (ROOT / "docs/probe.md").read_text(encoding="utf-8")
    example = docs.split("## A worked example: the reference chat", 1)[1]
    block = example.split("```console\n", 1)[1].split("```", 1)[0]
    shown = block.split("\nreqfold probe: ", 1)[1].split("\n", 1)[1]
    result = probe(
        *("--cmd", f"{CHAT} --log-dir {{log_dir}}"),
        *("--resume-cmd", f"{CHAT} --resume {{log_path}}"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    real = result.stdout.split("\n", 1)[1]
    assert _comparable(real) == _comparable(shown)
