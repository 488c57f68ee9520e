"""A run stops asking an adapter that fails the same way, once the waits add up.

`FailureStreak` on its own, then real runs of a known-bad adapter
(`bad_adapters/stalls_then_fails.py`, a child process) that waits just
under ``--timeout`` and then exits, or answers with a wrong id, on every
request: restarted for every case, it cost about 3 hours for the vectors
at the default timeout.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.adapters.streak import MAX_IN_A_ROW, FailureStreak
from reqfold.conformance.errors import (
    AdapterCrashed,
    AdapterProtocolError,
    AdapterTimeout,
)

ROOT = Path(__file__).resolve().parents[2]
STALLS = ROOT / "tests/conformance/bad_adapters/stalls_then_fails.py"


def test_slow_failures_of_one_kind_in_a_row_stop_the_run_and_say_why() -> None:
    streak = FailureStreak(10.0)
    for _ in range(MAX_IN_A_ROW - 1):
        streak.failed(AdapterCrashed("exited"), waited=9.5)
        assert streak.reason is None
    streak.failed(AdapterCrashed("exited"), waited=9.5)
    assert streak.reason == (
        f"the adapter failed the same way (crash) on {MAX_IN_A_ROW} cases"
        " in a row, and the suite waited 28.5 s on them (more than 1.5 times"
        " the 10 s timeout)"
    )


def test_timeouts_in_a_row_stop_the_run_whatever_the_wait_was() -> None:
    streak = FailureStreak(None)
    for _ in range(MAX_IN_A_ROW):
        streak.failed(AdapterTimeout("no answer"), waited=0.0)
    assert streak.reason == f"the adapter timed out on {MAX_IN_A_ROW} cases in a row"


def test_failing_just_under_half_the_timeout_does_not_escape() -> None:
    """The trap a share of ``--timeout`` would leave: 4.9 s of 10 s a case."""
    streak = FailureStreak(10.0)
    for _ in range(3):
        streak.failed(AdapterProtocolError("wrong id"), waited=4.9)
    assert streak.reason is None  # 14.7 s waited: under the budget
    streak.failed(AdapterProtocolError("wrong id"), waited=4.9)
    assert streak.reason is not None
    assert "on 4 cases in a row" in streak.reason


@pytest.mark.parametrize(
    "between",
    [
        lambda streak: streak.succeeded(),
        lambda streak: streak.failed(AdapterProtocolError("bad id"), waited=9.0),
    ],
    ids=["an answer", "another kind"],
)
def test_an_answer_or_another_kind_ends_the_streak(between) -> None:
    streak = FailureStreak(10.0)
    for _ in range(MAX_IN_A_ROW - 1):
        streak.failed(AdapterCrashed("exited"), waited=9.0)
    between(streak)
    streak.failed(AdapterCrashed("exited"), waited=9.0)
    assert streak.reason is None


def test_quick_crashes_stop_the_run_only_once_their_waits_add_up() -> None:
    """An adapter that crashes at once on the cases of one method costs a
    restart each: the run goes on to the other methods, up to the budget."""
    streak = FailureStreak(10.0)
    for _ in range(74):
        streak.failed(AdapterCrashed("exited at once"), waited=0.2)
    assert streak.reason is None  # 14.8 s
    streak.failed(AdapterCrashed("exited at once"), waited=0.2)
    streak.failed(AdapterCrashed("exited at once"), waited=0.2)
    assert streak.reason is not None  # 15.2 s


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "kind"), [("exit", "crash"), ("wrong-id", "protocol error")]
)
def test_an_adapter_failing_just_before_the_timeout_is_given_up_after_three_cases(
    mode: str, kind: str
) -> None:
    impl = shlex.join([sys.executable, str(STALLS), mode, "0.6"])
    status, out, _err = reqfold_here(
        *("vectors", "--impl", impl, "--timeout", "1"),
        *("--revision", "session-prefix", "--format", "json"),
        limit=30,
    )
    assert status == 3
    report = json.loads(out)
    messages = [result["message"] for result in report["results"]]
    assert all(kind in message for message in messages[:MAX_IN_A_ROW])
    reason = report["stopped"]
    assert reason.startswith(
        f"the adapter failed the same way ({kind}) on {MAX_IN_A_ROW} cases in a row,"
        " and the suite waited "
    )
    assert reason.endswith("s on them (more than 1.5 times the 1 s timeout)")
    assert set(messages[MAX_IN_A_ROW:]) == {f"not run: {reason}"}
