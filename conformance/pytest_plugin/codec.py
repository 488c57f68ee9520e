"""The codec implementation of one pytest process: started once, run case by case.

Each vector item runs its one case through `run_vectors` (so a case is
judged, and a broken adapter restarted, exactly as ``reqfold run`` does),
with `CodecSession.connect` as the connector. It lends the one live
connection instead of starting a new one: ``initialize`` is answered from
the first start, and closing a loan keeps the connection open unless a
request on it failed, in which case the connection is really closed and
the next loan starts a new one. The session is closed when pytest ends.

Like the runner, it stops paying for a dead implementation: after
`MAX_IN_A_ROW` cases failed the same way after a wait (`FailureStreak`:
timeouts among them), or `MAX_FAILED_STARTS`
starts failed in a row, the remaining cases are errors at once.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from reqfold.conformance.adapters.connection import Connection
from reqfold.conformance.adapters.streak import FailureStreak
from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.codec.runner import case_result, run_vectors
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import Check
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

MAX_FAILED_STARTS = 3
"""Starts in a row that may fail before the remaining cases are not run."""


class CodecSession:
    """The live codec connection of this process, lent to `run_vectors`."""

    def __init__(self, start: Callable[[], Connection]) -> None:
        self._start = start
        self._live: Connection | None = None
        self._identity: JsonObject = {}
        self.failed_starts = 0
        self.last_start_error = ""
        self.streak = FailureStreak(None)
        """Cases in a row whose request timed out, or failed the same way
        after a wait."""

    def connect(self) -> Connection:
        """A loan of the live connection, starting it when there is none."""
        if self._live is None:
            live = self._start()
            try:
                identity = live.initialize()
            except BaseException:
                with contextlib.suppress(Exception):
                    live.close()
                raise
            self._live, self._identity = live, identity
        return _Loan(self, self._live)

    def run(self, revision: Revision, case: VectorCase) -> Check:
        """Run one case; an error result when the implementation is given up on."""
        given_up = self._given_up()
        if given_up is not None:
            return case_result(case, revision, Outcome.ERROR, given_up)
        report = run_vectors(self.connect, cases=[(revision, case)])
        if report.startup_error is not None:
            self.failed_starts += 1
            self.last_start_error = report.startup_error
            return case_result(
                case,
                revision,
                Outcome.ERROR,
                f"the implementation did not start: {report.startup_error}",
            )
        self.failed_starts = 0
        (result,) = report.results
        return result

    def _given_up(self) -> str | None:
        if self.failed_starts >= MAX_FAILED_STARTS:
            return (
                f"not run: the implementation failed to start {self.failed_starts}"
                f" times in a row; the last: {self.last_start_error}"
            )
        if self.streak.reason is not None:
            return f"not run: {self.streak.reason}"
        return None

    def broke(
        self, connection: Connection, error: BaseException, waited: float = 0.0
    ) -> None:
        """A request on `connection` failed after `waited` seconds: count it
        (`FailureStreak`), drop the connection."""
        self.streak.timeout = getattr(connection, "timeout", None)
        self.streak.failed(error, waited)
        if self._live is connection:
            self._live = None
        with contextlib.suppress(Exception):  # best effort, as the runner's close
            connection.close()

    def answered(self) -> None:
        """A request was answered: the failures in a row are over."""
        self.streak.succeeded()

    def identity(self) -> JsonObject:
        """The ``initialize`` answer of the live connection's start."""
        return self._identity

    def close(self) -> None:
        """Shut the live connection down (pytest is ending)."""
        live, self._live = self._live, None
        if live is not None:
            with contextlib.suppress(Exception):
                live.close()


class _Loan:
    """The session's connection as `run_vectors` sees it (module docstring)."""

    def __init__(self, session: CodecSession, connection: Connection) -> None:
        self._session = session
        self._connection = connection

    def initialize(self) -> JsonObject:
        return self._session.identity()

    def request(self, method: str, params: JsonObject) -> JsonObject:
        asked = time.monotonic()
        try:
            response = self._connection.request(method, params)
        except BaseException as error:
            self._session.broke(self._connection, error, time.monotonic() - asked)
            raise
        self._session.answered()
        return response

    def close(self) -> None:
        # A healthy connection stays open for the next case; a broken one
        # was already closed by `CodecSession.broke`.
        pass
