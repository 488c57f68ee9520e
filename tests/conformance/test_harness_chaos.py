"""`reqfold run` against harness adapters that break: no verdict, never a hang.

Each adapter in ``chaos_harnesses/`` is the reference harness adapter with
one way of breaking (a hang, a crash, garbage, wrong ids, slow answers, a
helper holding the pipes, notifications the protocol does not allow,
refusals, endless chatter, a log that is a named pipe) and is run as a
real child process of ``reqfold run``, with a time limit: a suite that
hangs fails the test instead of blocking it. ``reqfold run`` itself is
called in the test's process (`cli_in_process`), so a run does not pay for
importing the suite again; the first test runs it as a real child process
(``python -m reqfold.conformance.cli``), as a user does. Whatever the adapter
does, the run must end with exit status
3 (no verdict), name an ERROR for the scenario with what went wrong and
where (and the tail of the adapter's stderr), print no traceback, and
leave no process behind: every adapter process and every helper records
its pid, and each must be gone.
After an error the adapter is restarted and the next scenario runs; a bug
of the suite's own while playing or judging is an error too, never a
traceback.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import commands
import pytest
from cli_in_process import reqfold_here
from processes import process_gone, wait_until

from reqfold.conformance.adapters import connection as connection_module
from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.adapters.inprocess import InProcessHarness
from reqfold.conformance.errors import AdapterProtocolError
from reqfold.conformance.harness import runner
from reqfold.conformance.harness.runner import run_scenarios
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.outcomes import Outcome
from reqfold.reference.revisions import Revision

CHAOS = Path(__file__).parent / "chaos_harnesses"
TIMEOUT = 2
"""The --timeout of every run, in seconds."""
RUN_LIMIT = 60
"""Seconds a whole ``reqfold run`` may take before the test calls it a hang."""
PLAIN = "plain-turns@session-prefix/run"
"""The check ID of a scenario run that errored (plain-turns, one revision)."""


@dataclass
class Run:
    """What one ``reqfold run`` did."""

    code: int
    out: str
    err: str
    seconds: float
    pids: list[tuple[int, str]]
    """``(pid, role)`` of every process the chaos adapters recorded."""

    def error(self, check_id: str = PLAIN) -> str:
        """The ERROR line of `check_id` and its message lines."""
        lines = self.out.splitlines()
        for index, line in enumerate(lines):
            if line.split()[:3] == ["ERROR", "scenarios", check_id]:
                message = [line]
                for more in lines[index + 1 :]:
                    if not more.startswith(" " * 9):
                        break
                    message.append(more.strip())
                return "\n".join(message)
        raise AssertionError(f"no ERROR for {check_id} in:\n{self.out}\n{self.err}")


def recorded(pid_file: Path) -> list[tuple[int, str]]:
    if not pid_file.exists():
        return []
    pids = []
    for line in pid_file.read_text().splitlines():
        pid, role = line.split()
        pids.append((int(pid), role))
    return pids


def kill_all(pids: list[tuple[int, str]]) -> None:
    """End what a failed test left behind (never needed when the suite works)."""
    for pid, _ in pids:
        if not process_gone(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def chaos(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """Run ``reqfold run`` against a chaos adapter; clean up whatever is left."""
    pid_file = tmp_path / "pids"

    def run(
        name: str,
        *adapter_args: str,
        scenarios: tuple[str, ...] = ("plain-turns",),
        once: bool = False,
        show: str = "problems",
        child: bool = False,
    ) -> Run:
        """`child`: run ``reqfold run`` as a child process, not in this one."""
        env = {"REQFOLD_CHAOS_PIDS": str(pid_file)}
        if once:
            env["REQFOLD_CHAOS_ONCE"] = str(tmp_path / "once")
        impl = shlex.join([sys.executable, str(CHAOS / f"{name}.py"), *adapter_args])
        args = [
            "run",
            "--impl",
            impl,
            "--only",
            "scenarios",
            "--revision",
            "session-prefix",
            "--timeout",
            str(TIMEOUT),
            "--show",
            show,
        ]
        for scenario in scenarios:
            args += ["--scenario", scenario]
        started = time.monotonic()
        if child:
            code, out, err = commands.reqfold(
                *args, timeout=RUN_LIMIT, env={**os.environ, **env}
            )
        else:
            code, out, err = reqfold_here(*args, env=env, limit=RUN_LIMIT)
        return Run(
            code=code,
            out=out,
            err=err,
            seconds=time.monotonic() - started,
            pids=recorded(pid_file),
        )

    try:
        yield run
    finally:
        kill_all(recorded(pid_file))


def assert_no_verdict(run: Run, *context: str, check_id: str = PLAIN) -> None:
    """Exit 3, an ERROR for `check_id` saying each of `context`, no traceback."""
    assert run.code == 3, run.out + run.err
    assert "Traceback" not in run.out + run.err
    assert "Verdict: NO VERDICT" in run.out
    error = run.error(check_id)
    for text in context:
        assert text in error, error


def assert_nothing_left(run: Run, adapters: int = 1) -> None:
    """Every process the adapters recorded is gone (the run's at least)."""
    assert sum(role == "adapter" for _, role in run.pids) >= adapters, run.pids
    left = [pid for pid, _ in run.pids]
    assert wait_until(lambda: all(process_gone(pid) for pid in left), 5), [
        (pid, role) for pid, role in run.pids if not process_gone(pid)
    ]


# ------------------------------------------------------------ hangs


@pytest.mark.slow
def test_a_turn_that_never_ends_is_an_error_and_the_hung_adapter_is_killed(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("never_ends_turns", child=True)  # as a user runs it: a process
    assert_no_verdict(
        run,
        f"timeout: no notification within {TIMEOUT}s; the adapter was killed",
        "while step 3 of 4: send 'Which store is this?', waiting for the"
        " turn/ended of i1",
        "stderr ended with:\nchaos: turn 2 of plain-turns.session-prefix:i1 is stuck",
    )
    assert_nothing_left(run)


@pytest.mark.slow
def test_a_request_that_is_never_answered_is_an_error_after_the_timeout(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("never_answers_send")
    assert_no_verdict(
        run,
        f"timeout: no answer to instance/send within {TIMEOUT}s;"
        " the adapter was killed",
        "while step 2 of 4: send 'Hello.'",
        "will never be answered",
    )
    assert_nothing_left(run)


@pytest.mark.slow
def test_an_answer_later_than_the_timeout_is_not_waited_for(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("answers_slowly", "--delay", "30")
    assert_no_verdict(
        run,
        f"no answer to session/open within {TIMEOUT}s; the adapter was killed",
        "while opening the session",
        "answering session/open in 30s",
    )
    assert run.seconds < 30
    assert_nothing_left(run)


@pytest.mark.slow
def test_an_adapter_that_talks_forever_without_ending_the_turn_cannot_hold_the_run(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("chatters")
    assert_no_verdict(
        run,
        f"the turn did not end within {3 * TIMEOUT}s",
        "notification(s) came meanwhile",
        "waiting for the turn/ended of i1",
        "chattering about a ghost instance",
    )
    assert run.seconds < RUN_LIMIT / 2
    assert_nothing_left(run)


# ------------------------------------------------------------ crashes and helpers


@pytest.mark.slow
def test_an_adapter_that_crashes_mid_turn_is_an_error_with_its_exit_status(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("crashes_in_second_turn")
    assert_no_verdict(
        run,
        "crash: the adapter exited while the suite waited for a"
        " notification (exit status 7)",
        "while step 3 of 4: send 'Which store is this?'",
        "stderr ended with:\nchaos: segmentation fault in turn 2",
    )
    # one adapter: the one that said what it declares played the scenario,
    # and none is started after the last scenario only to be shut down
    assert [role for _, role in run.pids] == ["adapter"]
    assert_nothing_left(run)


@pytest.mark.slow
def test_after_a_crash_the_adapter_is_restarted_and_the_next_scenario_runs(
    chaos: Callable[..., Run],
) -> None:
    run = chaos(
        "crashes_in_second_turn",
        scenarios=("plain-turns", "tool-call-turn"),
        once=True,
        show="all",
    )
    assert_no_verdict(run, "crash: ", "exit status 7")
    others = [
        line.split()[0]
        for line in run.out.splitlines()
        if "tool-call-turn@session-prefix/" in line
    ]
    assert others
    assert set(others) == {"pass"}, run.out
    assert "scenarios   " in run.out
    assert ": 1 error" in run.out or ", 1 error" in run.out
    # the adapter that said what it declares plays the first scenario, and
    # one restart plays the next: two adapter processes, not three
    assert sum(role == "adapter" for _, role in run.pids) == 2, run.pids
    assert_nothing_left(run, adapters=2)


@pytest.mark.slow
def test_an_adapter_that_cannot_be_restarted_costs_the_later_scenarios_with_why(
    chaos: Callable[..., Run],
) -> None:
    run = chaos(
        "crashes_in_second_turn",
        "--stay-down",
        scenarios=("plain-turns", "tool-call-turn", "tool-removed-between-turns"),
        once=True,
    )
    assert_no_verdict(run, "crash: ", "exit status 7")
    assert_no_verdict(
        run,
        "the adapter could not be restarted (3 attempts); the last:"
        " start-up failed: initialize failed: the adapter exited while"
        " answering initialize (exit status 4)",
        "stderr ended with:\nchaos: crashed before: refusing to start again (exit 4)",
        check_id="tool-call-turn@session-prefix/run",
    )
    # the run's adapter and three failed restarts; none more for the third
    # scenario: the failures in a row carry over
    assert sum(role == "adapter" for _, role in run.pids) == 1 + 3, run.pids
    assert_no_verdict(
        run,
        "the adapter could not be restarted (3 attempts)",
        check_id="tool-removed-between-turns@session-prefix/run",
    )
    assert_nothing_left(run, adapters=1 + 3)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("then", "context"),
    [
        pytest.param(
            "hang",
            f"timeout: no answer to instance/send within {TIMEOUT}s; the"
            " adapter was killed",
            id="then-hangs",
        ),
        pytest.param(
            "exit",
            # Seen at once, though the helper still holds stdout open.
            "crash: the adapter exited while answering instance/send (exit status 9)",
            id="then-exits",
        ),
    ],
)
def test_a_helper_holding_stdout_open_is_killed_with_the_broken_adapter(
    chaos: Callable[..., Run], then: str, context: str
) -> None:
    run = chaos("spawns_grandchild", "--then", then)
    assert_no_verdict(run, context, "while step 3 of 4", "keeps stdout open")
    assert sum(role == "helper" for _, role in run.pids) >= 1  # the broken adapter's
    assert_nothing_left(run)


@pytest.mark.slow
def test_a_helper_that_leaves_the_process_group_cannot_hold_the_run(
    chaos: Callable[..., Run],
) -> None:
    # The suite finds what left the group by the marker in its environment:
    # the run ends in bounded time, with the error reported, and nothing
    # (escaped helpers included) is left for the fixture to clean up.
    run = chaos("spawns_grandchild", "--then", "hang", "--escape")
    assert_no_verdict(run, "no answer to instance/send", "keeps stdout open")
    assert run.seconds < RUN_LIMIT / 2
    assert sum(role == "escaped" for _, role in run.pids) >= 1  # the broken adapter's
    assert_nothing_left(run)


# ------------------------------------------------------------ protocol breaches


@pytest.mark.slow
def test_a_line_of_garbage_on_stdout_mid_turn_is_a_protocol_error(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("writes_garbage")
    assert_no_verdict(
        run,
        "protocol error: not a JSON line",
        "DEBUG composing the request for Hello.",
        "while step 2 of 4: send 'Hello.'",
        "stderr ended with:\nchaos: logging to the wrong stream",
    )
    assert_nothing_left(run)


@pytest.mark.slow
def test_a_response_with_the_wrong_id_is_a_protocol_error(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("answers_wrong_ids")
    assert_no_verdict(
        run,
        "protocol error: response id 1004 does not echo request id 4",
        "while step 2 of 4: send 'Hello.'",
        "answering request 4 as 1004",
    )
    assert_nothing_left(run)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "context"),
    [
        pytest.param(
            (),
            "notification turn/ended breaks turn.ended.json: at ['params']:"
            " 'reason' is a required property",
            id="turn-ended-without-reason",
        ),
        pytest.param(
            ("--unknown",),
            "unknown notification 'turn/progress'",
            id="unknown-method",
        ),
    ],
)
def test_a_notification_the_protocol_does_not_allow_is_a_protocol_error(
    chaos: Callable[..., Run], args: tuple[str, ...], context: str
) -> None:
    run = chaos("breaks_notification_schema", *args)
    assert_no_verdict(
        run,
        f"protocol error: {context}",
        "while step 2 of 4: send 'Hello.', waiting for the turn/ended of i1",
        "stderr ended with:\nchaos: sending turn",
    )
    assert_nothing_left(run)


@pytest.mark.slow
def test_an_adapter_that_refuses_every_harness_method_gets_no_verdict(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("refuses_everything", scenarios=("plain-turns", "tool-call-turn"))
    for check_id in (PLAIN, "tool-call-turn@session-prefix/run"):
        assert_no_verdict(
            run,
            "the scenario could not be played: session/open was refused:",
            "the agent loop is not built in (code -32001)",
            "while opening the session",
            check_id=check_id,
        )
    assert "FAIL " not in run.out
    assert_nothing_left(run)


@pytest.mark.slow
def test_a_log_path_that_is_not_a_regular_file_is_an_error_not_a_blocked_read(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("points_log_at_a_fifo")
    assert_no_verdict(
        run,
        "protocol error: session/open answered a log that is not a regular file:",
        ".jsonl.fifo'",
        "while opening the session",
    )
    assert_nothing_left(run)


@pytest.mark.slow
def test_notifications_left_unread_beyond_the_limit_are_a_protocol_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(connection_module, "MAX_PENDING_NOTIFICATIONS", 5)
    script = (
        "import json, sys\n"
        "request = json.loads(sys.stdin.readline())\n"
        "for n in range(10):\n"
        "    note = {'jsonrpc': '2.0', 'method': 'turn/progress', 'params': {'n': n}}\n"
        "    print(json.dumps(note), flush=True)\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': {}}))\n"
    )
    connection = StdioConnection([sys.executable, "-c", script], timeout=5)
    try:
        with pytest.raises(AdapterProtocolError, match="more than 5 notifications"):
            connection.request("anything", {})
        assert not connection.alive
    finally:
        connection.close()


# ------------------------------------------------------------ the runner's own bugs


ONE = Revision.SESSION_PREFIX


def two_scenarios() -> list[Any]:
    wanted = ("plain-turns", "tool-call-turn")
    return [s for s in load_scenarios() if s.id in wanted]


@pytest.mark.slow
def test_an_exception_from_the_driver_is_an_error_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_run = runner.ScenarioDriver.run
    calls: list[str] = []

    def run(self: Any, scenario: Any, revision: Any) -> Any:
        calls.append(scenario.id)
        if len(calls) == 1:
            raise RuntimeError("a bug in the driver")
        return real_run(self, scenario, revision)

    started: list[InProcessHarness] = []

    def connect() -> InProcessHarness:
        started.append(InProcessHarness(timeout=10))
        return started[-1]

    monkeypatch.setattr(runner.ScenarioDriver, "run", run)
    report = run_scenarios(
        connect, revisions=[ONE], scenarios=two_scenarios(), workdir=tmp_path
    )
    errors = [r for r in report.results if r.outcome is Outcome.ERROR]
    assert [r.message for r in errors] == [
        "the suite failed while playing the scenario: RuntimeError: a bug in the driver"
    ]
    assert errors[0].scenario == "plain-turns"
    others = [r for r in report.results if r not in errors]
    assert others
    assert {r.outcome for r in others} == {Outcome.PASS}
    assert calls == ["plain-turns", "tool-call-turn"]
    assert len(started) == 2  # the adapter was restarted after the bug


@pytest.mark.slow
def test_an_exception_while_judging_is_an_error_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_judge = runner.judge
    calls: list[str] = []

    def judge(evidence: Any) -> Any:
        calls.append(evidence.scenario.id)
        if len(calls) == 1:
            raise KeyError("a bug in a check")
        return real_judge(evidence)

    monkeypatch.setattr(runner, "judge", judge)
    report = run_scenarios(
        lambda: InProcessHarness(timeout=10),
        revisions=[ONE],
        scenarios=two_scenarios(),
        workdir=tmp_path,
    )
    errors = [r for r in report.results if r.outcome is Outcome.ERROR]
    assert [r.message for r in errors] == [
        "the suite could not judge the evidence: KeyError: 'a bug in a check'"
    ]
    assert calls == ["plain-turns", "tool-call-turn"]
    assert {r.outcome for r in report.results if r not in errors} == {Outcome.PASS}


@pytest.mark.slow
@pytest.mark.spec("PREFIX-5")
def test_a_harness_that_leaks_a_sentinel_and_then_hangs_still_fails(
    chaos: Callable[..., Run],
) -> None:
    run = chaos("leaks_then_hangs", scenarios=("prefix-cancel-inside-composition",))
    assert run.code == 1, run.out + run.err
    assert "Verdict: NOT CONFORMANT" in run.out
    scenario = "prefix-cancel-inside-composition@session-prefix"
    assert "timeout: " in run.error(f"{scenario}/run")
    assert f"FAIL   scenarios  {scenario}/absent/SENTINEL-DEGRADED-7f3a" in run.out
    assert_nothing_left(run)


@pytest.mark.slow
def test_a_run_that_stops_before_its_scenarios_leaves_no_adapter_behind(
    tmp_path: Path,
) -> None:
    """The adapter started to read ``initialize`` would have played the first
    scenario; the run ends before it (a revision the harness does not
    declare), and that adapter ends with it."""
    pid_file = tmp_path / "pids"
    impl = shlex.join([sys.executable, str(CHAOS / "declares_session_prefix_only.py")])
    code, out, err = reqfold_here(
        *("run", "--impl", impl, "--only", "scenarios", "--revision", "header-events"),
        env={"REQFOLD_CHAOS_PIDS": str(pid_file)},
    )
    assert code == 2, out + err
    assert "header-events" in err
    pids = [int(line.split()[0]) for line in pid_file.read_text().splitlines()]
    try:
        assert len(pids) == 1, pids
        assert wait_until(lambda: all(process_gone(pid) for pid in pids), 5), pids
    finally:  # a failure here must not leave the adapter to the next test
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
