"""The plugin's codec session: one adapter per process, lent case by case.

In-process doubles of a connection stand in for the adapter so each way
it can break (a crash, a hang, a start that fails) is scripted exactly;
the real child processes are in test_pytest_plugin.py.
"""

from __future__ import annotations

from typing import Any

from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.codec.loading import iter_cases
from reqfold.conformance.codec.runner import MAX_TIMEOUTS_IN_A_ROW
from reqfold.conformance.errors import (
    AdapterCrashed,
    AdapterStartupFailed,
    AdapterTimeout,
)
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.pytest_plugin.codec import MAX_FAILED_STARTS, CodecSession
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

REVISION = Revision.SESSION_PREFIX
IDENTITY: JsonObject = {
    "name": "scripted",
    "version": "0",
    "revisions": [REVISION.value],
    "capabilities": ["codec"],
}
CASES: list[VectorCase] = [
    case for _, case in iter_cases(revisions={REVISION}) if case.is_positive
][:4]


def right_answer(case: VectorCase) -> JsonObject:
    return {"result": case.expected_result}


class Scripted:
    """A connection that answers from a script: a response, or an error to raise."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.requests = 0
        self.closed = False

    def initialize(self) -> JsonObject:
        return IDENTITY

    def request(self, method: str, params: JsonObject) -> JsonObject:
        self.requests += 1
        answer = self.script.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, dict)
        return answer

    def close(self) -> None:
        self.closed = True


class Starter:
    """Starts scripted connections (or fails to), and keeps each it started."""

    def __init__(self, scripts: list[Any]) -> None:
        self.scripts = scripts
        self.started: list[Scripted] = []
        self.attempts = 0

    def __call__(self) -> Scripted:
        self.attempts += 1
        script = self.scripts.pop(0)
        if isinstance(script, BaseException):
            raise script
        connection = Scripted(script)
        self.started.append(connection)
        return connection


def test_one_start_serves_every_case_and_a_crash_costs_one_case_and_a_restart() -> None:
    first, second, _, fourth = CASES
    starter = Starter(
        [
            [
                right_answer(first),
                right_answer(second),
                AdapterCrashed("exited (status 3)"),
            ],
            [right_answer(fourth)],
        ]
    )
    session = CodecSession(starter)
    outcomes = [session.run(REVISION, case).outcome for case in CASES]
    assert outcomes == [Outcome.PASS, Outcome.PASS, Outcome.ERROR, Outcome.PASS]
    crashed, restarted = starter.started
    assert (crashed.requests, crashed.closed) == (3, True)
    assert (restarted.requests, restarted.closed) == (1, False)  # kept for more
    session.close()
    assert restarted.closed


def test_a_wrong_answer_fails_its_case_and_keeps_the_adapter() -> None:
    first, second = CASES[:2]
    starter = Starter([[{"result": {"wrong": True}}, right_answer(second)]])
    session = CodecSession(starter)
    failed = session.run(REVISION, first)
    assert failed.outcome is Outcome.FAIL
    assert "expected" in failed.message
    assert session.run(REVISION, second).outcome is Outcome.PASS
    assert starter.attempts == 1


def test_after_timeouts_in_a_row_the_remaining_cases_are_errors_at_once() -> None:
    hung = [AdapterTimeout("no answer in 10 s")] * MAX_TIMEOUTS_IN_A_ROW
    # Each timeout is followed by a restart; every restart hangs again.
    starter = Starter([[error] for error in hung] + [[]])
    session = CodecSession(starter)
    results = [session.run(REVISION, case) for case in CASES]
    assert [r.outcome for r in results] == [Outcome.ERROR] * len(CASES)
    assert results[-1].message == (
        f"not run: the adapter timed out on {MAX_TIMEOUTS_IN_A_ROW} cases in a row"
    )
    asked = sum(connection.requests for connection in starter.started)
    assert asked == MAX_TIMEOUTS_IN_A_ROW  # the last case cost no timeout


def test_an_answer_ends_the_timeouts_in_a_row() -> None:
    third, fourth = CASES[2:]
    starter = Starter(
        [
            [AdapterTimeout("no answer")],
            [AdapterTimeout("no answer")],
            [right_answer(third), right_answer(fourth)],
        ]
    )
    session = CodecSession(starter)
    outcomes = [session.run(REVISION, case).outcome for case in CASES]
    assert outcomes == [Outcome.ERROR, Outcome.ERROR, Outcome.PASS, Outcome.PASS]
    assert session.streak.count == 0


def test_after_failed_starts_in_a_row_the_remaining_cases_are_errors_at_once() -> None:
    failing = [AdapterStartupFailed("no such file")] * MAX_FAILED_STARTS
    starter = Starter(list(failing))
    session = CodecSession(starter)
    results = [session.run(REVISION, case) for case in CASES]
    assert [r.outcome for r in results] == [Outcome.ERROR] * len(CASES)
    assert results[0].message.startswith("the implementation did not start:")
    assert results[-1].message.startswith(
        f"not run: the implementation failed to start {MAX_FAILED_STARTS} times"
    )
    assert starter.attempts == MAX_FAILED_STARTS
