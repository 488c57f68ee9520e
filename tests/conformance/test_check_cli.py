"""``reqfold check``: exit codes, formats, errors.

What only a process shows (exit statuses and stdout/stderr as a shell sees
them, a log piped to stdin, a reader that goes away, peak memory) runs
``reqfold check`` as a real child process; the rest calls it in the test's
process (`cli_in_process`), which saves the child's start-up (0.2 s of
CPU, more than checking a small log).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import reqfold_here
from processes import wait_until

from reqfold.conformance.check.log_rules import LogChecker
from reqfold.conformance.check.opening_rules import OpeningRules
from reqfold.conformance.rules import load_rules

FIXTURES = Path(__file__).parent / "check_fixtures"
VALID = FIXTURES / "valid" / "session-prefix.jsonl"
CAPTURE = FIXTURES / "requests" / "session-prefix.capture.jsonl"

pytestmark = pytest.mark.slow


COMMAND = (
    [shutil.which("reqfold")]  # the installed console script
    if shutil.which("reqfold")
    else [sys.executable, "-m", "reqfold.conformance.cli"]
)


def reqfold(*args: object) -> subprocess.CompletedProcess[str]:
    """``reqfold check ARGS`` as a child process."""
    return subprocess.run(
        [*COMMAND, "check", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def check_here(*args: object) -> subprocess.CompletedProcess[str]:
    """``reqfold check ARGS`` in this process."""
    argv = ["check", *map(str, args)]
    status, out, err = reqfold_here(*argv, limit=60)
    return subprocess.CompletedProcess(argv, status, out, err)


def test_a_valid_log_exits_zero_and_says_ok() -> None:
    result = reqfold(VALID)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": CONFORMANT:" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.spec("WRITER-3")
@pytest.mark.parametrize("name", ["/dev/stdin", "-"])
def test_a_log_read_from_a_pipe_is_checked_like_the_same_file(name: str) -> None:
    log = FIXTURES / "WRITER-3-padded-delta.jsonl"  # declares no revision
    by_path = reqfold(log)
    piped = subprocess.run(
        [*COMMAND, "check", name],
        input=log.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert piped.returncode == by_path.returncode == 1, piped.stdout + piped.stderr
    assert piped.stdout.replace(name, str(log), 1) == by_path.stdout
    assert "MUST [WRITER-3]" in piped.stdout


@pytest.mark.spec("WRITER-3")
def test_a_broken_must_rule_exits_one_and_names_rule_line_and_seq() -> None:
    result = check_here(FIXTURES / "WRITER-3-padded-delta.jsonl")
    assert result.returncode == 1
    assert "line 13, seq 11: MUST [WRITER-3]" in result.stdout
    assert "expected:" in result.stdout
    assert "found:" in result.stdout


@pytest.mark.spec("LOG-1")
def test_should_findings_warn_and_fail_only_with_strict() -> None:
    path = FIXTURES / "LOG-1-member-order.jsonl"
    result = check_here(path)
    assert result.returncode == 0
    # the finding's own level (LOG-1's SHOULD clause), not the rule's MUST
    assert "SHOULD [LOG-1]" in result.stdout
    assert "MUST" not in result.stdout.replace("0 MUST (failing)", "")
    assert check_here("--strict", path).returncode == 1


@pytest.mark.spec("JSONL-4")
def test_repeats_of_one_rule_share_one_explanation(tmp_path: Path) -> None:
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 400)  # 100 KB, hundreds of findings
    result = check_here(binary)
    assert result.returncode == 1
    findings = [line for line in result.stdout.splitlines() if "[JSONL-4]" in line]
    assert len(findings) > 100
    rule_text = load_rules()["JSONL-4"].text[:60]
    assert result.stdout.count(rule_text) == 1


def test_json_format_prints_one_object_per_log() -> None:
    broken = FIXTURES / "FOLD-2-delta-before-any-snapshot.jsonl"
    result = check_here("--format", "json", VALID, broken)
    assert result.returncode == 1
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["ok"] is True
    assert first["path"] == str(VALID)
    assert first["events"] == 58
    assert first["unknown_types"] == {"approval/policy": 1}
    assert second["ok"] is False
    assert [first["format"], second["format"]] == ["reqfold-check/1"] * 2
    assert (first["outcome"], second["outcome"]) == ("pass", "fail")
    assert "violations" not in second
    [found] = second["findings"]
    assert {k: found[k] for k in ("rule", "level", "line", "seq")} == {
        "rule": "FOLD-2",
        "level": "MUST",
        "line": 5,
        "seq": 3,
    }
    assert found["message"]


@pytest.mark.parametrize(
    ("args", "stdin", "said"),
    [
        (["-"], None, "reqfold check: -: cannot read: standard input is closed\n"),
        (
            ["-", "-"],
            subprocess.DEVNULL,
            "reqfold check: error: '-' (standard input) can be read once\n"
            "see 'reqfold check --help'\n",
        ),
    ],
)
def test_standard_input_closed_or_named_twice_exits_2_in_one_line(
    args: list[str], stdin: int | None, said: str
) -> None:
    # stdin None: the child closes descriptor 0 before Python starts
    done = subprocess.run(
        [*COMMAND, "check", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=(lambda: os.close(0)) if stdin is None else None,
    )
    assert done.returncode == 2
    assert done.stderr == said


def test_json_for_a_path_that_is_not_utf8_is_utf8_and_gives_the_path_back(
    tmp_path: Path,
) -> None:
    folder = os.fsencode(tmp_path)
    name = folder + b"/bad\xffname.jsonl"
    with open(name, "wb") as copy:
        copy.write(VALID.read_bytes())
    done = subprocess.run(
        [*COMMAND, b"check", b"--format", b"json", name],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.decode("utf-8")  # valid UTF-8 (ASCII, in fact)
    assert os.fsencode(json.loads(line)["path"]) == name


@pytest.mark.spec("REQ-1", "CHECK-1")
def test_requests_are_compared_with_the_log() -> None:
    assert check_here(VALID, "--requests", CAPTURE).returncode == 0
    tampered = FIXTURES / "requests" / "session-prefix.tampered-message.capture.jsonl"
    result = check_here(VALID, "--requests", tampered, "--format", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["findings"][0]["rule"] == "REQ-1"


def test_an_unreadable_file_exits_two_and_says_so_once_on_stderr(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing.jsonl"
    result = reqfold(missing)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("cannot") == 1
    assert f"{missing}: cannot read: No such file or directory" in result.stderr
    directory = reqfold(tmp_path)
    assert directory.returncode == 2
    assert "Traceback" not in directory.stderr
    as_json = reqfold("--format", "json", missing, VALID)
    assert as_json.returncode == 2
    unread, checked = map(json.loads, as_json.stdout.splitlines())
    assert (unread["outcome"], unread["error"]) == (
        "error",
        "cannot read: No such file or directory",
    )
    assert checked["ok"] is True


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json\n", "line 1: not JSON"),
        ('{"messages": []}\n{"foo": 1}\n', "line 2: neither a capture line"),
    ],
    ids=["not-json", "an-object-that-is-no-request"],
)
def test_an_unreadable_capture_exits_two(tmp_path: Path, text: str, said: str) -> None:
    capture = tmp_path / "capture.jsonl"
    capture.write_text(text)
    result = check_here(VALID, "--requests", capture)
    assert result.returncode == 2
    assert said in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--format", "yaml", str(VALID)],
        ["--revision", "final", str(VALID)],
        [str(VALID), str(VALID), "--requests", str(CAPTURE)],
    ],
)
def test_wrong_arguments_exit_two(args: list[str]) -> None:
    result = check_here(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


@pytest.mark.spec("JSONL-1", "JSONL-3", "JSON-1")
def test_bad_input_never_prints_a_traceback(tmp_path: Path) -> None:
    paths = []
    for name, data in {
        "empty": b"",
        "bom": b"\xef\xbb\xbf" + VALID.read_bytes(),
        "binary": bytes(range(256)) * 10,
        "deep": b'{"type":"session","version":0,"id":"s","createdAt":0}\n'
        + b"[" * 200_000
        + b"\n",
        "torn": VALID.read_bytes()[:-30],
    }.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        paths.append(path)
    result = check_here("--format", "json", *paths)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(reports) == len(paths)
    for report in reports:
        assert all(v["line"] >= 1 for v in report["findings"])


def test_help_reads_well() -> None:
    result = check_here("--help")
    assert result.returncode == 0
    for option in ("--requests", "--revision", "--strict", "--format", "--thorough"):
        assert option in result.stdout


def test_a_reader_that_stops_early_gets_no_traceback_and_the_status_so_far(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"not json\n" * 2000)  # a long report
    child = subprocess.Popen(
        [*COMMAND, "check", broken, broken, broken],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.readline()
    child.stdout.close()  # like ``| head -1``
    stderr = child.stderr.read().decode()
    child.stderr.close()
    assert child.wait(timeout=60) == 1
    assert "Traceback" not in stderr, stderr


MEASURED = (
    "import re, sys\n"
    "from reqfold.conformance.cli import main\n"
    "status = main(['check', *sys.argv[1:]])\n"
    "with open('/proc/self/status') as status_file:\n"
    "    peak = re.search(r'VmHWM:\\s+(\\d+)', status_file.read())[1]\n"
    "print(peak, file=sys.stderr)\n"
    "raise SystemExit(status)\n"
)
"""Checks, then prints its peak RSS: VmHWM, which (unlike ru_maxrss) a child
does not inherit from the test process it was forked from."""


def peak_kib(*args: object) -> tuple[int, int]:
    """Peak RSS (KiB) and exit status of a child process checking `args`."""
    result = subprocess.run(
        [sys.executable, "-c", MEASURED, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return int(result.stderr.split()[-1]), result.returncode


BIG = 40 << 20
STORAGE = b'{"type":"session","version":0,"id":"s","createdAt":0}\n'
TURN_END = b'{"type":"turn/end","seq":%d,"time":0,"data":{"turn":1,"reason":{}}}\n'


def string_line() -> tuple[bytes, int]:
    """A turn/start, then one tool/call line holding one long string."""
    return (
        b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n'
        b'{"type":"tool/call","seq":1,"time":0,"data":{"text":"'
        + b"a" * BIG
        + b'"}}\n',
        2,
    )


def numbers_line() -> tuple[bytes, int]:
    """A turn/start line whose data holds a list of small numbers."""
    return (
        b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1,"n":['
        + b"0," * (BIG // 2)
        + b"0]}}\n",
        1,
    )


@pytest.fixture(scope="module")
def small_log_peak_kib(tmp_path_factory: pytest.TempPathFactory) -> int:
    """Peak RSS (KiB) of checking a small log: the huge-line tests' baseline,
    measured once for both."""
    small = tmp_path_factory.mktemp("small") / "small.jsonl"
    small.write_bytes(STORAGE + string_line()[0][:57] + TURN_END % 1)
    baseline, status = peak_kib(small)
    assert status == 0
    return baseline


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
@pytest.mark.parametrize("make", [string_line, numbers_line])
def test_a_huge_line_costs_little_more_memory_than_the_line_itself(
    tmp_path: Path, make: Any, small_log_peak_kib: int
) -> None:
    big = tmp_path / "big.jsonl"
    lines, seqs = make()
    big.write_bytes(STORAGE + lines + TURN_END % seqs)
    del lines
    baseline = small_log_peak_kib
    peak, status = peak_kib(big)
    assert status == 0
    # docs/checker.md: about the line once more than a small log (was 2-6x)
    assert (peak - baseline) * 1024 < 1.3 * BIG, (peak, baseline)


@pytest.mark.spec("CHECK-2")
def test_a_rule_that_raises_gives_no_verdict_not_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug of the checker is not the log's fault: exit 3, an ERROR finding."""

    def crash(*args: object) -> None:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(OpeningRules, "header_event", crash)
    result = check_here(VALID)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert ": NO VERDICT:" in result.stdout
    assert "ERROR [CHECK-2] the checker could not check this line" in result.stdout
    assert "MUST [" not in result.stdout
    report = json.loads(check_here("--format", "json", VALID).stdout)
    assert report["outcome"] == "error"
    assert report["must"] == 0
    assert report["errors"] == len(report["findings"]) > 0
    assert {f["level"] for f in report["findings"]} == {"ERROR"}
    # a log that breaks a MUST rule still fails: the verdict stands
    failing = check_here(FIXTURES / "TURN-2-step-numbering.jsonl")
    assert failing.returncode == 1
    assert "MUST [TURN-2]" in failing.stdout
    assert "ERROR [CHECK-2]" in failing.stdout
    # and over several files the failure wins over the missing verdict
    assert check_here(VALID, FIXTURES / "LOG-2-gap.jsonl").returncode == 1


@pytest.mark.spec("CHECK-2")
@pytest.mark.parametrize("end", [b"\n", b""])
def test_a_rule_that_raises_on_a_header_event_leaves_the_header_unknown(
    monkeypatch: pytest.MonkeyPatch, end: bytes
) -> None:
    """What the header became is not judged after a rule failed on it, the
    last line unterminated (read strictly, with no envelope from the reader)
    or not."""

    def crash(*args: object) -> None:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(OpeningRules, "header_event", crash)
    lines = [
        b'{"type":"session","version":0,"id":"s","createdAt":0}\n',
        b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n',
        b'{"type":"request/header-delta","seq":1,"time":0,"data":{}}' + end,
    ]
    checker = LogChecker()
    found = list(checker.check(lines))
    assert ("CHECK-2", 3) in {(f.rule, f.line) for f in found}
    assert checker.opening.fold.unknown


def test_a_requests_file_that_cannot_be_read_is_named_as_such() -> None:
    result = check_here(VALID, "--requests", "/no/such/capture.jsonl")
    assert result.returncode == 2
    assert "--requests /no/such/capture.jsonl: cannot read: No such file" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


APPENDER = r"""
import json, sys, time
from reqfold.reference.shells.jsonl import dump_line, make_storage_line
path = sys.argv[1]
with open(path, "a", encoding="utf-8") as log:
    log.write(dump_line(make_storage_line("grows", 0, revision="session-prefix")))
    seq = 0
    while True:  # appends for as long as it lives: the test ends it
        chunk = "".join(
            json.dumps({"type": "note", "seq": seq + n, "time": 1, "data": {}}) + "\n"
            for n in range(1000)
        )
        seq += 1000
        log.write(chunk)
        log.flush()
        time.sleep(0.005)  # about 10 MB/s: the disk fills slowly
"""


@pytest.mark.slow
def test_a_log_appended_to_while_it_is_checked_is_checked_as_it_was_at_the_start(
    tmp_path: Path,
) -> None:
    log = tmp_path / "grows.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", APPENDER, str(log)])
    try:
        assert wait_until(lambda: log.exists() and log.stat().st_size > 1 << 20)
        status, out, err = reqfold_here("check", str(log), "--format", "json", limit=30)
        grown = log.stat().st_size
    finally:
        writer.kill()
        writer.wait()
    assert status == 0, (out + err)[:2000]
    [report] = [json.loads(line) for line in out.splitlines()]
    [note] = report["notes"]
    assert note.startswith("the file grew while it was checked: the ")
    checked = int(note.split("the ")[2].split(" bytes")[0])
    assert (1 << 20) < checked < grown
    assert report["lines"] < grown // 40  # what was there, not what came after


def test_a_torn_last_line_of_a_capture_is_left_out_with_a_note_as_a_logs_is(
    tmp_path: Path,
) -> None:
    fixtures = Path(__file__).parent / "check_fixtures"
    log = fixtures / "valid" / "session-prefix.jsonl"
    whole = (fixtures / "requests" / "session-prefix.capture.jsonl").read_bytes()
    capture = tmp_path / "capture.jsonl"
    capture.write_bytes(whole + b'{"index": 4, "path": "/chat/comp')
    status, out, err = reqfold_here("check", str(log), "--requests", str(capture))
    assert (status, err) == (0, ""), out
    lines = whole.count(b"\n") + 1
    assert (
        f"  note: --requests {capture}: line {lines} is a torn last line (no"
        " newline, not JSON): left out, as a torn tail of the log is"
    ) in out
    assert "4 matched to captured requests" in out
