"""``reqfold check --requests CAPTURE`` with no log: the cache judged alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from cache_sessions import SYSTEM, Session
from cli_in_process import reqfold_here

from reqfold.conformance.rules import load_rules
from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server


def check_here(*args: object) -> subprocess.CompletedProcess[str]:
    """``reqfold check ARGS`` in this process."""
    argv = ["check", *map(str, args)]
    status, out, err = reqfold_here(*argv, limit=60)
    return subprocess.CompletedProcess(argv, status, out, err)


@pytest.fixture(scope="module")
def resumed_next_day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A capture: two turns, then a process resumed with tomorrow's date."""
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.system = SYSTEM.replace("2026-12-06", "2026-12-07")
    session.turn("turn 2")
    path = tmp_path_factory.mktemp("capture") / "requests.jsonl"
    path.write_text("\n".join(session.lines()) + "\n", encoding="utf-8")
    return path


@pytest.mark.spec("CACHE-3", "STREAM-1")
def test_a_capture_alone_is_judged_with_no_log_rule_in_the_verdict(
    resumed_next_day: Path,
) -> None:
    result = check_here("--requests", resumed_next_day, "--process-start", "2:resume")
    assert result.returncode == 0, result.stderr
    assert "request 2 (main, resume of request 1): date-time" in result.stdout
    assert "WARN  cache/resume-extends [CACHE-3]" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "Verdict: CONFORMANT (with SHOULD warnings)"
    )
    log_rules = [rule for rule in load_rules() if rule.startswith(("JSONL", "LOG"))]
    for rule in (*log_rules, "CHECK-1", "CHECK-3"):
        assert rule not in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ("--process-start", "2", "--process-start", "2:fresh"),
            "--process-start: index 2 is given twice",
        ),
        (
            ("--expect-break", "2=a", "--expect-break", "2=b"),
            "--expect-break: index 2 is given twice",
        ),
        (
            ("--process-start", "0:resume"),
            "--process-start 0:resume: the capture's first request starts",
        ),
    ],
    ids=["start-twice", "break-twice", "start-at-the-first"],
)
def test_a_declaration_given_twice_or_meaningless_is_refused_in_one_line(
    resumed_next_day: Path, args: tuple[str, ...], says: str
) -> None:
    result = check_here("--requests", resumed_next_day, *args)
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    assert result.stderr.startswith("reqfold check: " + says), result.stderr
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.spec("CACHE-3")
def test_strict_and_the_gates_turn_the_warning_into_status_one(
    resumed_next_day: Path,
) -> None:
    base = ("--requests", resumed_next_day, "--process-start", "2:resume")
    assert check_here(*base, "--strict").returncode == 1
    assert check_here(*base, "--fail-on", "date-time,nonce").returncode == 1
    assert check_here(*base, "--fail-on", "nonce").returncode == 0
    assert check_here(*base, "--max-lost-tokens", "0").returncode == 1
    assert check_here(*base, "--max-lost-tokens", "100000").returncode == 0


def test_without_the_process_start_the_same_break_fails_cache_1(
    resumed_next_day: Path,
) -> None:
    result = check_here("--requests", resumed_next_day, "--format", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    (broken,) = document["breaks"]
    assert broken["rules"] == ["CACHE-1", "CACHE-2"]
    assert broken["lost"] == document["lost_tokens"] > 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "give a session log, or --requests CAPTURE alone"),
        (("--fail-on", "weather"), "unknown cause(s)"),
        (("--process-start", "x:resume"), "expected INDEX[:resume|fresh]"),
        (("--max-lost-tokens", "-3"), "expected a number of tokens"),
    ],
)
def test_bad_arguments_are_said_in_one_line_with_status_two(
    args: tuple[str, ...], said: str
) -> None:
    result = check_here(*args)
    assert result.returncode == 2
    assert said in result.stderr
    assert "Traceback" not in result.stderr


def test_the_gates_with_a_log_are_refused(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("", encoding="utf-8")
    result = check_here(log, "--fail-on", "nonce")
    assert result.returncode == 2
    assert "judge a capture with no log" in result.stderr


def test_a_capture_line_that_is_not_a_request_is_named(tmp_path: Path) -> None:
    capture = tmp_path / "requests.jsonl"
    capture.write_text('{"index": 0, "path": "/chat/completions"}\nnot json\n')
    result = check_here("--requests", capture)
    assert result.returncode == 2
    assert "line 2: not JSON (expecting value at character 1)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_capture_with_no_answered_request_is_no_verdict(tmp_path: Path) -> None:
    capture = tmp_path / "requests.jsonl"
    capture.write_text(
        json.dumps({"index": 0, "path": "/chat/completions", "status": 400}) + "\n"
    )
    result = check_here("--requests", capture)
    assert result.returncode == 3
    assert result.stdout == "Verdict: NO VERDICT: no request the fake answered\n"
    assert result.stderr == ""


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [{"index": 0, "path": "/chat/completions", "status": 500}] * 2,
    ],
    ids=["empty", "only-500s"],
)
def test_no_answered_request_prints_one_verdict_no_verdict_matching_status_three(
    tmp_path: Path, lines: list[dict[str, object]]
) -> None:
    capture = tmp_path / "requests.jsonl"
    capture.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = check_here("--requests", capture)
    assert result.returncode == 3
    verdicts = [
        line
        for line in result.stdout.splitlines()
        if line.lower().startswith("verdict:")
    ]
    assert verdicts == ["Verdict: NO VERDICT: no request the fake answered"]
    assert result.stdout.splitlines() == verdicts  # no empty report around it
    assert result.stderr == ""


@pytest.mark.spec("CACHE-3")
def test_a_new_api_key_starts_a_process_when_none_is_given(tmp_path: Path) -> None:
    session = Session()
    session.client.headers["authorization"] = "Bearer key-of-run-1"
    session.turn("turn 0")
    session.turn("turn 1")
    session.client.headers["authorization"] = "Bearer key-of-run-2"
    session.system = SYSTEM.replace("2026-12-06", "2026-12-07")
    session.turn("turn 2")
    capture = tmp_path / "requests.jsonl"
    capture.write_text("\n".join(session.lines()) + "\n", encoding="utf-8")
    result = check_here("--requests", capture)
    assert result.returncode == 0, result.stdout
    assert "request 2 (main, resume of request 1): date-time" in result.stdout
    assert "      2  process 2" in result.stdout


@pytest.mark.spec("CACHE-1", "CACHE-3")
def test_a_declared_process_start_keeps_the_capture_s_own_marks_elsewhere(
    tmp_path: Path,
) -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.system = SYSTEM.replace("2026-12-06", "2026-12-07")
    session.turn("turn 2")
    session.system = SYSTEM.replace("2026-12-06", "2026-12-08")
    session.turn("turn 3")
    lines = [json.loads(line) for line in session.lines()]
    lines[2]["process_start"] = "resume"
    lines[3]["process_start"] = "fresh"  # the declared start below wins here
    capture = tmp_path / "requests.jsonl"
    capture.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = check_here("--requests", capture, "--process-start", "3:resume")
    assert result.returncode == 0, result.stdout
    assert "request 2 (main, resume of request 1): date-time" in result.stdout
    assert "request 3 (main, resume of request 2): date-time" in result.stdout
    assert "      2  process 2" in result.stdout
    assert "      3  process 3" in result.stdout


def test_a_price_table_gives_the_tokens_lost_as_a_cost(resumed_next_day: Path) -> None:
    base = ("--requests", resumed_next_day, "--process-start", "2:resume")
    document = json.loads(check_here(*base, "--format", "json").stdout)
    priced = json.loads(
        check_here(*base, "--format", "json", "--price", "2,0.5").stdout
    )
    assert priced["lost_cost"] == pytest.approx(document["lost_tokens"] * 1.5 / 1e6)
    tenth = check_here(*base, "--format", "json", "--price", "0.3,0.2").stdout
    cost = json.loads(tenth)["lost_cost"]
    assert cost == round(document["lost_tokens"] * 0.1 / 1e6, 10)
    assert f'"lost_cost": {cost!r}' in tenth  # no float noise in the digits
    assert len(repr(cost).replace("e-", "").replace(".", "")) <= 10, cost
    text = check_here(*base, "--price", "2,0.5").stdout
    assert f"(costing {priced['lost_cost']:.6f} at the prices given)" in text
    refused = check_here(*base, "--price", "0.5,2")
    assert refused.returncode == 2
    assert "expected 0 <= CACHED <= UNCACHED" in refused.stderr


def test_a_reader_that_leaves_the_json_early_stops_it_quietly_with_its_status(
    resumed_next_day: Path,
) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader has left before a byte is written
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "reqfold.conformance.cli",
                "check",
                "--requests",
                str(resumed_next_day),
                "--format",
                "json",
            ],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
    assert done.returncode == 1  # the CACHE-1 break, as when read whole


def test_the_json_says_its_verdict_and_status(resumed_next_day: Path) -> None:
    broken = json.loads(
        check_here("--requests", resumed_next_day, "--format", "json").stdout
    )
    assert broken["status"] == 1
    assert broken["verdict"].startswith("NOT CONFORMANT")
    base = ("--requests", resumed_next_day, "--process-start", "2:resume")
    kept = json.loads(check_here(*base, "--format", "json").stdout)
    assert kept["status"] == 0
    assert kept["verdict"].startswith("CONFORMANT")
    strict = json.loads(check_here(*base, "--format", "json", "--strict").stdout)
    assert strict["status"] == 1


def test_a_break_in_one_process_says_after_which_request(
    resumed_next_day: Path,
) -> None:
    result = check_here("--requests", resumed_next_day)
    assert "request 2 (main, after request 1): date-time" in result.stdout
    assert "within of" not in result.stdout


@pytest.mark.spec("STREAM-4")
def test_an_echo_problem_with_no_break_is_printed_under_its_own_heading(
    tmp_path: Path,
) -> None:
    session = Session()
    session.messages.append({"role": "user", "content": "hello"})
    answer = session.send()
    session.messages.append({"role": "assistant", "content": answer["content"] + "!"})
    session.turn("turn 1")
    capture = tmp_path / "requests.jsonl"
    capture.write_text("\n".join(session.lines()) + "\n", encoding="utf-8")
    lines = check_here("--requests", capture).stdout.splitlines()
    assert "breaks:" not in lines
    heading = lines.index("echoes:")
    assert lines[heading - 1] == ""
    assert lines[heading + 1].startswith("  request 1 (main): the assistant turn")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("--process-start", "99:resume"), "--process-start"),
        (("--expect-break", "99"), "--expect-break"),
        (("--process-start", "2", "--expect-break", "3=why"), "--expect-break"),
    ],
    ids=["process-start", "expect-break", "one-of-two"],
)
def test_an_index_the_capture_does_not_hold_is_refused_in_one_line(
    resumed_next_day: Path, args: tuple[str, ...], option: str
) -> None:
    result = check_here("--requests", resumed_next_day, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    (said,) = result.stderr.splitlines()
    assert said.startswith(f"reqfold check: {option}: the capture")
    assert "holds no request" in said
    assert "(its indices run 0 to 2)" in said


def test_an_expected_breaks_file_naming_an_unheld_index_is_refused(
    resumed_next_day: Path, tmp_path: Path
) -> None:
    declared = tmp_path / "breaks.jsonl"
    declared.write_text('{"index": 7, "why": "a /clear"}\n')
    result = check_here("--requests", resumed_next_day, "--expect-breaks", declared)
    assert result.returncode == 2
    assert f"--expect-breaks {declared}: the capture" in result.stderr
    assert "no request 7" in result.stderr


def test_the_verdict_is_said_in_the_words_of_every_other_command(
    resumed_next_day: Path,
) -> None:
    broken = check_here("--requests", resumed_next_day).stdout.splitlines()
    assert broken[-1] == "Verdict: NOT CONFORMANT: a MUST rule is broken"
    base = ("--requests", resumed_next_day, "--process-start", "2:resume")
    strict = check_here(*base, "--strict").stdout.splitlines()
    assert strict[-1] == (
        "Verdict: NOT CONFORMANT: a SHOULD rule is broken, and --strict counts it"
    )
    assert not any(line.startswith("verdict:") for line in broken + strict)


@pytest.mark.slow
def test_a_capture_a_capture_limit_truncated_is_said_to_begin_late(
    tmp_path: Path,
) -> None:
    messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM}]
    with (
        running_server(FakeProvider("deepseek", capture_limit=2)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        for turn in range(4):
            messages.append({"role": "user", "content": f"turn {turn} " * 40})
            reply = client.post(
                "/chat/completions",
                json={"model": "deepseek-chat", "messages": messages},
            )
            messages.append(reply.json()["choices"][0]["message"])
        stats = client.get("/_fake/stats").json()
        assert stats["capture"]["dropped_requests"] == 2
        capture = tmp_path / "requests.jsonl"
        capture.write_bytes(client.get("/_fake/requests.jsonl").content)
    text = check_here("--requests", capture).stdout
    assert "the capture begins at index 2: the 2 request(s) before it" in text
    assert text.splitlines()[2].startswith("note: truncated capture:")
    document = json.loads(check_here("--requests", capture, "--format", "json").stdout)
    assert (document["begins_at"], document["truncated"]) == (2, True)
    whole = check_here("--requests", capture, "--format", "json")
    assert json.loads(whole.stdout)["status"] == 0


def test_a_whole_capture_is_not_said_truncated(resumed_next_day: Path) -> None:
    text = check_here("--requests", resumed_next_day).stdout
    assert "truncated" not in text
    document = json.loads(
        check_here("--requests", resumed_next_day, "--format", "json").stdout
    )
    assert (document["begins_at"], document["truncated"]) == (0, False)


@pytest.mark.spec("CACHE-1", "CACHE-3")
def test_where_nothing_tells_a_process_start_the_failure_says_how_to_declare_one(
    resumed_next_day: Path, tmp_path: Path
) -> None:
    alone = check_here("--requests", resumed_next_day).stdout
    assert "if request 2 began a resumed process, --process-start 2:resume" in alone
    lines = resumed_next_day.read_text().splitlines()
    marked = json.loads(lines[2]) | {"process_start": "resume"}
    capture = tmp_path / "requests.jsonl"
    capture.write_text("\n".join([*lines[:2], json.dumps(marked)]) + "\n")
    told = check_here("--requests", capture)
    assert told.returncode == 0, told.stdout
    assert "request 2 (main, resume of request 1): date-time" in told.stdout
    assert "--process-start 2:resume" not in told.stdout


def test_a_capture_line_may_say_a_break_there_is_expected(
    resumed_next_day: Path, tmp_path: Path
) -> None:
    lines = resumed_next_day.read_text().splitlines()
    marked = json.loads(lines[2]) | {"expect_break": "a /model"}
    capture = tmp_path / "requests.jsonl"
    capture.write_text("\n".join([*lines[:2], json.dumps(marked)]) + "\n")
    result = check_here("--requests", capture)
    assert result.returncode == 0, result.stdout
    assert "date-time (expected: a /model)" in result.stdout
    flagged = check_here("--requests", capture, "--expect-break", "2=a compaction")
    assert "date-time (expected: a compaction)" in flagged.stdout
