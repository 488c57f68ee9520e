"""A session log of any size is judged in bounded memory.

`harness.log_file` on its own, then real runs: a chaos adapter
(`chaos_harnesses/answers_a_huge_log.py`, a child process) answers
``session/open`` with a log of 96 MiB, which the suite once read whole
(231 MB of memory for 64 MiB; 3.2 GB for 1.5 GiB), and a probed harness
(`bad_probe_harnesses/leaves_a_huge_partial_line.py`) leaves a partial
last line of 96 MiB (229 MB). Memory is measured as
the peak resident set of the ``reqfold`` process and everything it started,
as the kernel counts it for a parent that waited for them.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from reqfold.conformance.harness import log_file
from reqfold.conformance.harness.log_file import (
    count_lines,
    lines_holding,
    log_pieces,
    read_log,
)

CHAOS = Path(__file__).parent / "chaos_harnesses"
PROBE_HARNESSES = Path(__file__).parent / "bad_probe_harnesses"
BOUND_MB = 100
"""The most a run may hold, whatever the size of the log (issue 32)."""

PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(done.returncode, peak, sep="\\n")
print(done.stdout, end="")
"""


def peak_of(*args: str, env: dict[str, str] | None = None) -> tuple[int, int, str]:
    """``reqfold ARGS`` in a child: its exit status, the peak memory (MB) of it
    and its descendants, and its stdout."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK,
            *(sys.executable, "-m", "reqfold.conformance.cli", *args),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, **(env or {})},
    )
    status, peak, out = done.stdout.split("\n", 2)
    return int(status), int(peak), out


def test_a_small_log_is_read_whole_and_a_large_one_only_measured(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"x\n" * 50)
    assert read_log(log, limit=100, lines=50) == log_file.LogRead(b"x\n" * 50, 100)
    for large in (read_log(log, limit=99), read_log(log, lines=49)):
        assert (large.data, large.size, large.left_on_disk) == (b"", 100, True)
    absent = read_log(tmp_path / "none.jsonl")
    assert (absent, absent.left_on_disk) == (log_file.LogRead(b"", 0), False)


def test_lines_are_counted_and_streamed_in_pieces(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"a\n" + b"b" * 10 + b"\nc")
    assert count_lines(log) == 2
    assert list(log_pieces(log, piece=4)) == [b"a\n", b"bbbb", b"bbbb", b"bb\n", b"c"]


def test_text_is_found_on_its_line_across_chunk_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_file, "CHUNK", 8)
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"first line\nsecond SECRET here\nSECRET SECRET\nnone\nSEC")
    assert list(lines_holding(log, b"SECRET")) == [2, 3]
    assert list(lines_holding(log, b"absent")) == []


@pytest.mark.slow
def test_a_huge_log_an_adapter_answers_is_checked_streaming_in_bounded_memory() -> None:
    impl = shlex.join([sys.executable, str(CHAOS / "answers_a_huge_log.py"), "96"])
    status, peak, out = peak_of(
        *("run", "--impl", impl, "--only", "scenarios", "--scenario", "plain-turns"),
        *("--revision", "session-prefix", "--timeout", "60"),
    )
    assert peak < BOUND_MB, out
    # the log's rules were judged from the file: this log is not the session's
    assert status == 1, out
    assert "plain-turns@session-prefix/log/CHECK-1" in out
    assert "Traceback" not in out


@pytest.mark.slow
def test_a_huge_partial_last_line_of_a_probed_harness_costs_bounded_memory() -> None:
    harness = shlex.join(
        [sys.executable, str(PROBE_HARNESSES / "leaves_a_huge_partial_line.py")]
    )
    status, peak, out = peak_of(
        *("probe", "--base-url-env", "OPENAI_BASE_URL"),
        *("--api-key-env", "OPENAI_API_KEY"),
        *("--cmd", f"{harness} --log-dir {{log_dir}}"),
        env={"REQFOLD_PARTIAL_MIB": "96"},
    )
    assert peak < BOUND_MB, out
    # the torn tail is the trace of a crash: every line before it is judged
    assert status == 0, out
    assert "Verdict: CONFORMANT" in out


def test_a_torn_tail_longer_than_the_bound_is_checked_only_in_part(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"one\ntwo\n" + b"x" * 100)
    assert list(log_pieces(log, torn=10)) == [b"one\n", b"two\n", b"x" * 10]
    assert read_log(log) == log_file.LogRead(b"one\ntwo\n" + b"x" * 100, 108)
