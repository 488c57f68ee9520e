"""``reqfold run ... | head -1``: a reader that leaves is no verdict of the
implementation's. The run goes on quietly, writes its reports and exits
with its verdict's status."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reqfold.conformance.output import ReaderMayLeave


class LeftPipe(io.StringIO):
    """A stream whose reader left after `keep` writes."""

    def __init__(self, keep: int) -> None:
        super().__init__()
        self.keep = keep

    def write(self, text: str) -> int:
        if self.keep <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.keep -= 1
        return super().write(text)


def test_what_is_written_after_the_reader_left_is_dropped_without_an_error() -> None:
    stream = LeftPipe(keep=1)
    output = ReaderMayLeave(stream)
    output.write("first\n")
    output.write("second\n")
    output.flush()
    output.write("third\n")
    assert output.gone
    assert stream.getvalue() == "first\n"


@pytest.mark.slow
def test_a_run_whose_stdout_closes_still_reports_and_exits_with_its_verdict(
    tmp_path: Path,
) -> None:
    report = tmp_path / "run.json"
    child = subprocess.Popen(
        [
            sys.executable,
            *("-m", "reqfold.conformance.cli", "run", "--only", "scenarios"),
            *("--scenario", "plain-turns", "--report-json", str(report)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stderr is not None
    first = child.stdout.readline()
    child.stdout.close()  # | head -1
    status = child.wait(timeout=120)
    stderr = child.stderr.read()
    child.stderr.close()
    assert first.startswith("reqfold run: reqfold-reference")
    assert status == 0, stderr
    assert stderr == ""
    assert json.loads(report.read_text(encoding="utf-8"))["verdict"]["exitStatus"] == 0
