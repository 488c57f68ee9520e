"""Whatever an adapter does, the suite ends it, its whole tree, and itself quietly.

Every test here runs real child processes: adapters from ``bad_adapters/``
that leave their process group, hang after ``initialize`` or get
interrupted mid-run, and ``reqfold vectors`` itself, stopped with real
signals. An ``--impl`` that is no command is refused before any process
starts: the first such case runs ``reqfold vectors`` as a child, the
others call it in the test's process (`cli_in_process`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from processes import process_gone, wait_until

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.codec.loading import iter_cases
from reqfold.conformance.codec.runner import MAX_TIMEOUTS_IN_A_ROW, run_vectors
from reqfold.conformance.errors import AdapterCrashed
from reqfold.conformance.outcomes import Outcome
from reqfold.reference.revisions import Revision

BAD = Path(__file__).parent / "bad_adapters"
GONE_WITHIN = 30
"""Seconds a killed process may take to be gone: a bound, not a wait (it
returns at once when gone), wide enough for a machine under load, where
5 s once failed."""


def adapter(name: str) -> list[str]:
    return [sys.executable, str(BAD / f"{name}.py")]


def vectors(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reqfold.conformance.cli", "vectors", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def detached_helpers(state: Path) -> list[int]:
    return [int(path.name.split("-")[1]) for path in state.glob("detached-*")]


# ------------------------------------------------------------ the whole tree


@pytest.mark.slow
def test_a_crash_is_seen_at_once_though_a_detached_helper_holds_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper in a session of its own keeps the pipe open after the adapter
    exits: the crash must not cost --timeout, and the helper must die."""
    monkeypatch.setenv("REQFOLD_BAD_STATE", str(tmp_path))
    folds = [
        (Revision.SESSION_PREFIX, case)
        for revision, case in iter_cases(revisions={Revision.SESSION_PREFIX})
        if case.method == "codec/fold"
    ][:4]
    argv = adapter("detaches_grandchild")
    started = time.monotonic()
    report = run_vectors(lambda: StdioConnection(argv, timeout=30), cases=folds)
    elapsed = time.monotonic() - started
    assert [r.outcome for r in report.results] == [Outcome.ERROR] * 4
    assert all(
        "crash: " in r.message and "exit status 3" in r.message for r in report.results
    ), [r.message for r in report.results]
    assert elapsed < 20  # four crashes, five starts: not four timeouts of 30 s
    helpers = detached_helpers(tmp_path)
    assert len(helpers) == 5  # the first start and one restart per crash
    assert wait_until(lambda: all(process_gone(pid) for pid in helpers), GONE_WITHIN)


@pytest.mark.slow
@pytest.mark.parametrize("how", [(), ("--clear-env",)], ids=["marked", "unmarked"])
def test_a_helper_that_left_the_process_group_is_killed_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: tuple[str, ...]
) -> None:
    """Found by the marker in its environment, or, once it has cleared its
    environment, by the pipe it holds."""
    monkeypatch.setenv("REQFOLD_BAD_STATE", str(tmp_path))
    connection = StdioConnection([*adapter("detaches_grandchild"), *how], timeout=10)
    connection.initialize()
    [helper] = detached_helpers(tmp_path)
    assert os.getpgid(helper) != os.getpgid(connection._process.pid)
    connection.close()
    assert connection.returncode == 0  # it shut down when asked
    assert wait_until(lambda: process_gone(helper), GONE_WITHIN)


@pytest.mark.slow
def test_ending_an_adapter_never_waits_on_a_pipe_something_else_still_holds() -> None:
    """The test itself holds the adapter's stdout open: a process the suite
    cannot kill. Ending the adapter must neither wait for that pipe to end
    nor leave a reader thread behind."""
    threads_before = threading.active_count()
    connection = StdioConnection(
        [sys.executable, "-m", "reqfold.reference.adapter"], timeout=10
    )
    connection.initialize()
    holder = os.open(f"/proc/{connection._process.pid}/fd/1", os.O_WRONLY)
    try:
        started = time.monotonic()
        connection.kill()
        elapsed = time.monotonic() - started
        assert threading.active_count() == threads_before
        assert elapsed < 1.5
    finally:
        os.close(holder)


# ------------------------------------------------------------ a hang after initialize


@pytest.mark.slow
def test_an_adapter_that_hangs_after_initialize_stops_the_run_with_no_verdict() -> None:
    impl = " ".join(adapter("hangs_after_initialize"))
    process = vectors("--impl", impl, "--timeout", "0.5")
    started = time.monotonic()
    out, err = process.communicate(timeout=120)
    elapsed = time.monotonic() - started
    assert process.returncode == 3
    assert "Traceback" not in err
    reason = f"the adapter timed out on {MAX_TIMEOUTS_IN_A_ROW} cases in a row"
    assert f"Stopped: {reason}" in out
    assert f"Verdict: NO VERDICT: the run stopped ({reason})" in out
    # One line per case that timed out, not one per case of the corpus.
    assert out.count("ERROR") == MAX_TIMEOUTS_IN_A_ROW
    assert elapsed < 30


@pytest.mark.slow
def test_an_adapter_that_cannot_be_restarted_stops_the_run_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQFOLD_BAD_STATE", str(tmp_path))
    cases = list(iter_cases(revisions={Revision.SESSION_PREFIX}))[:5]
    argv = adapter("dies_for_good")
    report = run_vectors(lambda: StdioConnection(argv, timeout=10), cases=cases)
    assert report.stopped == "the adapter could not be restarted"
    assert "exit status 4" in report.results[0].message
    assert [r.detail["notRun"] for r in report.results] == [
        False,
        True,
        True,
        True,
        True,
    ]
    assert {r.outcome for r in report.results} == {Outcome.ERROR}
    assert report.dump()["stopped"] == report.stopped
    assert report.exit_status() == 3


# ------------------------------------------------------------ signals


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)]
)
def test_a_signal_kills_the_adapter_and_reqfold_vectors_exits_quietly(
    tmp_path: Path, signum: int, status: int
) -> None:
    env = {**os.environ, "REQFOLD_BAD_STATE": str(tmp_path)}
    impl = " ".join([*adapter("hangs_after_initialize"), "--detach"])
    # It hangs on the first case, and only the signal can end the run early.
    process = vectors("--impl", impl, "--timeout", "600", env=env)
    try:
        assert wait_until(lambda: bool(detached_helpers(tmp_path)), 30)
        [helper] = detached_helpers(tmp_path)
        adapter_pid = wait_for_child(process.pid)
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == status
    assert err.strip().endswith("reqfold vectors: interrupted; no verdict")
    assert "Traceback" not in out + err
    assert wait_until(lambda: process_gone(adapter_pid), GONE_WITHIN)
    assert wait_until(lambda: process_gone(helper), GONE_WITHIN)


def wait_for_child(pid: int) -> int:
    """The pid of `pid`'s one child (the adapter), once it has one."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    assert wait_until(lambda: bool(children.read_text().split()), 30)
    return int(children.read_text().split()[0])


# ------------------------------------------------------------ bad --impl values


@pytest.mark.slow
@pytest.mark.parametrize(
    ("impl", "complaint", "child"),
    [
        ("", "--impl is empty", True),
        ("   ", "--impl is empty", False),
        ("python 'unterminated quote", "cannot be split like a shell would", False),
    ],
)
def test_an_impl_that_is_no_command_is_a_bad_argument(
    impl: str, complaint: str, child: bool
) -> None:
    if child:
        process = vectors("--impl", impl)
        out, err = process.communicate(timeout=60)
        status = process.returncode
    else:
        status, out, err = reqfold_here("vectors", "--impl", impl)
    assert status == 2
    assert out == ""
    assert err.startswith("reqfold vectors: --impl ")
    assert complaint in err
    assert len(err.strip().splitlines()) == 1
    assert "internal error" not in err


@pytest.mark.slow
def test_sigterm_to_reqfold_run_kills_a_hung_harness_adapter_without_waiting(
    tmp_path: Path,
) -> None:
    """The polite shutdown a hung adapter would never answer is skipped: the
    run ends at once, not after --timeout."""
    pids = tmp_path / "pids"
    chaos = Path(__file__).parent / "chaos_harnesses" / "never_answers_send.py"
    process = subprocess.Popen(
        [
            *(
                sys.executable,
                "-m",
                "reqfold.conformance.cli",
                "run",
                "--only",
                "scenarios",
            ),
            *("--impl", f"{sys.executable} {chaos}", "--timeout", "600"),
            *("--revision", "session-prefix", "--scenario", "plain-turns"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "REQFOLD_CHAOS_PIDS": str(pids)},
    )
    try:
        assert wait_until(lambda: pids.exists() and "waiting" in pids.read_text(), 60)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143
    assert err.strip().endswith("reqfold run: interrupted; no verdict")
    assert "Traceback" not in out + err
    recorded = [int(line.split()[0]) for line in pids.read_text().splitlines()]
    assert wait_until(lambda: all(process_gone(pid) for pid in recorded), 5)


@pytest.mark.slow
def test_a_sigterm_in_the_middle_of_killing_an_adapter_waits_until_it_is_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The signal comes while the tree is being killed (here: sent by the
    kill itself, from a thread that is not the main one, as the kernel may
    pick any thread): the adapter is killed and reaped, then the run is
    interrupted."""
    from reqfold.conformance.adapters import process_tree
    from reqfold.conformance.interrupts import run_guarded

    connection = StdioConnection([sys.executable, "-m", "reqfold.reference.adapter"])
    connection.initialize()
    pid = connection._process.pid
    real_kill_tree = process_tree.kill_tree

    def signalled_mid_kill(*args: object, **kwargs: object) -> None:
        sender = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGTERM))
        sender.start()
        sender.join()
        real_kill_tree(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(process_tree, "kill_tree", signalled_mid_kill)

    def body() -> int:
        connection.kill()
        return 0

    try:
        assert run_guarded("test", body) == 128 + signal.SIGTERM
        assert connection._process.returncode is not None  # reaped, not orphaned
        assert process_gone(pid)
    finally:  # a failure here must not leave the adapter to the next test
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_an_adapter_that_closes_its_stdout_and_lives_on_is_said_to_have_closed_it() -> (
    None
):
    timeout = 60.0
    connection = StdioConnection(adapter("closes_stdout_and_lives"), timeout=timeout)
    connection.initialize()
    started = time.monotonic()
    with pytest.raises(AdapterCrashed) as caught:  # not AdapterTimeout
        connection.request("codec/canonical", {"header": {}})
    elapsed = time.monotonic() - started
    pid = connection._process.pid
    connection.close()
    assert str(caught.value) == (
        "the adapter closed its stdout while answering codec/canonical (killed)"
    )
    # said when stdout closed, not once the timeout ran out (however loaded
    # the machine, waiting for the timeout takes the whole timeout)
    assert elapsed < timeout
    assert wait_until(lambda: process_gone(pid), 30)
