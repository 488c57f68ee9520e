"""A harness that exits before its first turn is fed is described one way:
by its exit and status, the same in the run's line and in its check."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.probe.harness import HarnessProcess

EXITED_5 = "the harness exited (status 5) before turn 1 of 3 was fed"


def _probe(command: str, log_dir: Path) -> tuple[int, str]:
    code, out, err = reqfold_here(
        "probe",
        "--cmd",
        command,
        "--base-url-env",
        "OPENAI_BASE_URL",
        "--log-dir",
        str(log_dir),
        limit=60,
    )
    return code, out + err


@pytest.mark.spec("CHECK-3")
@pytest.mark.parametrize(
    "command",
    # one exits at once, one first closes its stdin: whichever the probe
    # sees first (the exit, or a write that fails), the words are the same
    ["sh -c 'exit 5'", "sh -c 'exec 0<&-; exit 5'"],
)
@pytest.mark.slow
def test_a_harness_that_exits_before_its_first_turn_is_said_to_have_exited(
    command: str, tmp_path: Path
) -> None:
    code, out = _probe(command, tmp_path)
    assert code == 1, out
    assert "run 1: 0 of 3 turn(s) fed, 0 handled, 0 request(s); exit status 5" in out
    assert f"  stopped: {EXITED_5}" in out
    assert f"0 of 3 turn(s) handled: {EXITED_5}" in out
    assert "closed its stdin" not in out


@pytest.mark.slow
@pytest.mark.spec("CHECK-3")
def test_an_exit_0_before_the_first_turn_is_not_said_twice(tmp_path: Path) -> None:
    code, out = _probe("true", tmp_path)
    assert code == 1, out
    said = "the harness exited (status 0) before turn 1 of 3 was fed"
    assert f"0 of 3 turn(s) handled: {said}" in out
    assert "exited 0 all the same" not in out


@pytest.mark.slow
def test_a_harness_whose_stdin_broke_reports_its_exit_status_once_it_exits() -> None:
    changed = threading.Condition()
    process = HarnessProcess(
        ["sh", "-c", "exec 0<&-; exit 3"], {"PATH": "/usr/bin:/bin"}, changed
    )
    process.start()
    try:
        assert process.exit_status_within(30) == 3
        assert not process.feed("turn 1")
    finally:
        process.end()
    assert process.returncode == 3
    assert not process.killed


@pytest.mark.slow
def test_a_harness_still_running_with_its_stdin_closed_has_no_exit_status() -> None:
    changed = threading.Condition()
    command = ["sh", "-c", "exec 0<&-; exec tail -f /dev/null"]
    process = HarnessProcess(command, {"PATH": "/usr/bin:/bin"}, changed)
    process.start()
    try:
        assert process.exit_status_within(0) is None
    finally:
        process.end()
    assert process.exit_status_within(30) is not None
