"""A session log of any size is judged in bounded memory.

`harness.log_file` on its own, then real runs: a chaos adapter
(`chaos_harnesses/answers_a_huge_log.py`, a child process) answers
``session/open`` with a log of 96 MiB, which the suite once read whole
(231 MB of memory for 64 MiB; 3.2 GB for 1.5 GiB). Memory is measured as
the peak resident set of the ``reqfold`` process and everything it started,
as the kernel counts it for a parent that waited for them.
"""

from __future__ import annotations

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
BOUND_MB = 100
"""The most a run may hold, whatever the size of the log (issue 32)."""

PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(done.returncode, peak, sep="\\n")
print(done.stdout, end="")
"""


def peak_of(*args: str) -> tuple[int, int, str]:
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
    )
    status, peak, out = done.stdout.split("\n", 2)
    return int(status), int(peak), out


def test_a_small_log_is_read_whole_and_a_large_one_only_measured(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"x" * 100)
    assert read_log(log, limit=100) == log_file.LogRead(b"x" * 100, 100)
    large = read_log(log, limit=99)
    assert (large.data, large.size, large.too_large) == (b"", 100, False)
    assert read_log(tmp_path / "none.jsonl") == log_file.LogRead(b"", 0)


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
