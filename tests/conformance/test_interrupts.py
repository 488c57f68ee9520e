"""`conformance.interrupts`: a stop that waits, is never lost, and never
contradicts a verdict already given.

Each test sends itself a real SIGTERM under `run_guarded`, the handler
every ``reqfold`` command runs under.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import threading
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.interrupts import commit_verdict, run_guarded, signals_deferred


def test_a_sigterm_inside_a_deferred_block_interrupts_only_once_it_is_done() -> None:
    done: list[str] = []

    def body() -> int:
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("the rest of the block")
        done.append("after the block")
        return 0

    assert run_guarded("test", body) == 128 + signal.SIGTERM
    assert done == ["the rest of the block"]


def test_a_deferred_sigterm_is_raised_even_when_the_block_raises() -> None:
    def body() -> int:
        try:
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                raise OSError("the block failed")
        except OSError:
            return 0  # a caller that copes with the block's own failure
        return 1

    assert run_guarded("test", body) == 128 + signal.SIGTERM


def test_nested_blocks_interrupt_when_the_outer_one_ends() -> None:
    done: list[str] = []

    def body() -> int:
        with signals_deferred():
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
            done.append("the outer block goes on")
        return 0

    assert run_guarded("test", body) == 128 + signal.SIGTERM
    assert done == ["the outer block goes on"]


def test_a_signal_after_the_verdict_is_said_and_the_verdict_stands(capsys) -> None:
    def body() -> int:
        commit_verdict()
        print("Verdict: CONFORMANT")
        os.kill(os.getpid(), signal.SIGTERM)  # while the reports are written
        return 0

    assert run_guarded("test", body) == 0
    assert capsys.readouterr().err == (
        "test: interrupted after the verdict was given; it stands\n"
    )


def test_a_signal_held_back_before_the_verdict_stops_the_run_at_the_verdict() -> None:
    said: list[str] = []

    def body() -> int:
        with contextlib.suppress(KeyboardInterrupt), signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
        commit_verdict()
        said.append("Verdict: CONFORMANT")
        return 0

    assert run_guarded("test", body) == 128 + signal.SIGTERM
    assert said == []


@pytest.mark.slow
def test_a_ctrl_c_while_the_reports_are_written_leaves_the_verdict_and_its_status(
    tmp_path: Path,
) -> None:
    # The JSON report goes to a pipe whose reader presses Ctrl-C (a SIGINT
    # to this process, where the run is) the moment the report's first byte
    # comes: after the verdict was printed, before the run ends. The pipe's
    # read end is open before the run starts, since the run tries the
    # report's path (and holds the pipe) before it plays anything.
    report = tmp_path / "report.json"
    os.mkfifo(report)
    descriptor = os.open(report, os.O_RDONLY | os.O_NONBLOCK)
    got: list[bytes] = []

    def reader() -> None:
        # Linux reports no hang-up on a pipe no writer has opened yet, so
        # the poll waits for the first byte (or the writer's end).
        poll = select.poll()
        poll.register(descriptor, select.POLLIN)
        poll.poll(60_000)
        os.set_blocking(descriptor, True)
        with open(descriptor, "rb") as pipe:
            first = pipe.read(1)
            os.kill(os.getpid(), signal.SIGINT)
            got.append(first + pipe.read())

    thread = threading.Thread(target=reader)
    thread.start()
    status, out, err = reqfold_here(
        *("run", "--only", "vectors", "--revision", "session-prefix"),
        *("--report-json", str(report)),
    )
    thread.join(timeout=30)
    assert "Verdict: CONFORMANT" in out
    assert (status, err) == (
        0,
        "reqfold run: interrupted after the verdict was given; it stands\n",
    )
    assert json.loads(got[0])["verdict"]["exitStatus"] == 0
