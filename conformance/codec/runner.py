"""Running the codec vectors against an implementation, case by case.

Each case gets exactly one outcome (Bowtie's distinction between a wrong
answer and a broken implementation):

* ``pass``: the answer is what the spec says;
* ``warn``: it differs only where the spec says SHOULD (member order);
* ``fail``: a wrong answer, a MUST broken;
* ``error``: no verdict: the adapter crashed, hung, or answered with
  something that is not a JSON-RPC response (or the suite itself failed
  on the case). The adapter is restarted and the run goes on with the
  next case, unless it failed the same way on `MAX_TIMEOUTS_IN_A_ROW` or
  more cases in a row at a cost (`FailureStreak`: timeouts, or exits or
  wrong answers whose waits add up to `WAIT_BUDGET` timeouts) or could not be
  restarted: then the run stops, says why, and every case left is an
  ``error`` marked as not run;
* ``skip``: the implementation does not declare the case's revision.

Every case belongs to a profile (docs/vectors.md, "Profiles"): ``core``
is always judged, ``strict`` (input validation) when the implementation
claims the ``strict`` capability in ``initialize`` or the caller asks for
it. Every case runs either way; the results of a profile that is not
judged are reported on their own (`VectorReport.profile_line`) and never
change the exit status.

The run is sequential and deterministic: same implementation, same
vectors, same report. Whatever happens, the implementation is closed
when the run ends, and killed at once when the run is interrupted.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from reqfold.conformance.adapters.connection import Connection
from reqfold.conformance.adapters.lifecycle import abandon, declared_revisions, describe
from reqfold.conformance.adapters.streak import MAX_IN_A_ROW, FailureStreak
from reqfold.conformance.codec.cases import CORE, PROFILES, STRICT, VectorCase
from reqfold.conformance.codec.judging import Verdict, judge_response
from reqfold.conformance.codec.loading import iter_cases
from reqfold.conformance.errors import AdapterError
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import Check
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

MAX_RESTARTS = 3
"""Consecutive failed restarts after which the remaining cases are errors."""

MAX_TIMEOUTS_IN_A_ROW = MAX_IN_A_ROW
"""Cases in a row an adapter may time out on (or fail the same way on after
a wait, `FailureStreak`) before the rest are not run: an adapter that
answers ``initialize`` and then nothing would otherwise cost a timeout per
case (an hour for the corpus at the default)."""


PART = "vectors"
"""The part every vector check belongs to."""


def profile_of(result: Check) -> str:
    """The profile (``core``, ``strict``) of a vector check's case."""
    return str(result.detail.get("profile", CORE))


def is_not_run(result: Check) -> bool:
    """A vector check that is an error only because the run had stopped
    before its case."""
    return result.detail.get("notRun") is True


def case_json(result: Check) -> JsonObject:
    """A vector check as ``reqfold vectors --format json`` lists it."""
    detail = result.detail
    return {
        "id": result.name,
        "revision": result.revision,
        "method": detail.get("method"),
        "rules": list(result.rules),
        "level": result.level,
        "profile": profile_of(result),
        "outcome": result.outcome.value,
        "message": result.message,
        "errorCode": detail.get("errorCode"),
        "errorKind": detail.get("errorKind"),
        "errorRule": detail.get("errorRule"),
        "errorSeq": detail.get("errorSeq"),
    }


def claimed_profiles(identity: JsonObject) -> frozenset[str]:
    """``core``, plus ``strict`` when ``initialize`` lists it in ``capabilities``."""
    capabilities = identity.get("capabilities")
    claims = capabilities if isinstance(capabilities, list) else []
    return frozenset({CORE} | ({STRICT} if STRICT in claims else set()))


def judged_profiles(identity: JsonObject, profile: str | None) -> frozenset[str]:
    """The profiles the verdict covers: `profile` and what it extends, when
    the caller chose one (``strict`` extends ``core``), else the claimed ones."""
    if profile is None:
        return claimed_profiles(identity)
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    return frozenset(PROFILES[: PROFILES.index(profile) + 1])


@dataclass(slots=True, kw_only=True)
class VectorReport:
    """Every case result of a run, with the implementation's identity.

    `judged` holds the profiles the verdict covers; results of the others
    are kept, counted apart (`counts(profile=...)`) and shown on their own
    line (`profile_line`).
    """

    implementation: JsonObject
    results: list[Check] = field(default_factory=list)
    startup_error: str | None = None
    stopped: str | None = None
    """Why the run stopped sending cases before the end, if it did."""
    judged: frozenset[str] = frozenset({CORE})
    chosen: str | None = None
    """The ``--profile`` the caller gave, if any."""

    def counted(self, result: Check) -> bool:
        """The result is one of a judged profile, so it counts in the verdict."""
        return profile_of(result) in self.judged

    def counts(self, *, profile: str | None = None) -> dict[str, int]:
        """How many cases had each outcome (every outcome listed): the judged
        ones by default, or those of `profile`, judged or not."""
        tally = Counter(
            result.outcome
            for result in self.results
            if (
                self.counted(result)
                if profile is None
                else profile_of(result) == profile
            )
        )
        return {outcome.value: tally.get(outcome, 0) for outcome in Outcome}

    def profile_line(self, profile: str = STRICT) -> str:
        """`profile`'s results on one line, and whether they are in the verdict:
        ``strict input validation: 12 of 99 pass, not claimed (not in the
        verdict)``."""
        counts = self.counts(profile=profile)
        ran = sum(n for outcome, n in counts.items() if outcome != Outcome.SKIP.value)
        right = counts["pass"] + counts["warn"]
        others = ", ".join(
            f"{counts[o]} {o}" for o in ("fail", "error", "skip") if counts[o]
        )
        claimed = profile in claimed_profiles(self.implementation)
        judged = profile in self.judged
        if self.chosen is None:
            status = "claimed" if claimed else "not claimed (not in the verdict)"
        else:
            status = ("claimed" if claimed else "not claimed") + (
                f", judged as --profile {self.chosen} asks"
                if judged
                else f", left out of the verdict as --profile {self.chosen} asks"
            )
        name = "strict input validation" if profile == STRICT else f"{profile} profile"
        detail = f" ({others})" if others else ""
        return f"{name}: {right} of {ran} pass{detail}, {status}"

    def exit_status(self, *, strict: bool = False) -> int:
        """0 conformant, 1 a failure, 3 errors only (or nothing ran), over the
        judged profiles only."""
        counts = self.counts()
        if counts["fail"] or (strict and counts["warn"]):
            return 1
        ran = counts["pass"] + counts["warn"]
        if self.startup_error is not None or counts["error"] or ran == 0:
            return 3
        return 0

    def dump(self) -> JsonObject:
        """The JSON report: identity, counts, and every case."""
        return {
            "format": "reqfold-vectors/1",
            "implementation": self.implementation,
            "startupError": self.startup_error,
            "stopped": self.stopped,
            "profiles": {
                "claimed": sorted(claimed_profiles(self.implementation)),
                "judged": sorted(self.judged),
            },
            "counts": self.counts(),
            "profileCounts": {name: self.counts(profile=name) for name in PROFILES},
            "results": [case_json(result) for result in self.results],
        }


def case_result(
    case: VectorCase,
    revision: Revision,
    outcome: Outcome,
    message: str = "",
    *,
    not_run: bool = False,
    response: JsonObject | None = None,
) -> Check:
    """The check of running `case` under `revision`: its profile and method,
    and what the error of `response` said when it is an error response, in
    its `detail`."""
    return Check(
        part=PART,
        id=f"{revision.value}/{case.id}",
        name=case.id,
        revision=revision.value,
        rules=tuple(case.rules),
        level=case.level,
        outcome=outcome,
        message=message,
        detail={
            "method": case.method,
            "profile": case.profile,
            "notRun": not_run,
            **_error_fields(response),
        },
    )


def _error_fields(response: JsonObject | None) -> JsonObject:
    """A vector check's ``error*`` details from an error response: what the
    implementation said, each kept only when it has the protocol's type
    (the message of the result says what else it sent)."""
    error = response.get("error") if response is not None else None
    if not isinstance(error, dict):
        return dict.fromkeys(("errorCode", "errorKind", "errorRule", "errorSeq"))
    data = error.get("data")
    data = data if isinstance(data, dict) else {}

    def text(value: object) -> str | None:
        return value if isinstance(value, str) else None

    def integer(value: object) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)  # JSON-5: 2.0 is the integer 2
        return None

    return {
        "errorCode": integer(error.get("code")),
        "errorKind": text(data.get("kind")),
        "errorRule": text(data.get("rule")),
        "errorSeq": integer(data.get("seq")),
    }


_VERDICTS = {
    Verdict.PASS: Outcome.PASS,
    Verdict.WARN: Outcome.WARN,
    Verdict.FAIL: Outcome.FAIL,
}


def run_vectors(
    connect: Callable[[], Connection],
    *,
    revisions: Iterable[Revision] | None = None,
    cases: Iterable[tuple[Revision, VectorCase]] | None = None,
    on_result: Callable[[Check], None] | None = None,
    profile: str | None = None,
) -> VectorReport:
    """Run `cases` (default: every vector) against the implementation.

    `connect` starts (or restarts) the implementation; `revisions` limits
    the run to those revisions; `on_result` sees each result as it comes;
    `profile` chooses what the verdict covers (`judged_profiles`; default:
    what the implementation claims).
    No exception from the implementation or from judging escapes: each
    costs its case an ``error``.
    """
    wanted = None if revisions is None else set(revisions)
    selected = list(iter_cases(revisions=wanted) if cases is None else cases)
    try:
        connection = connect()
    except AdapterError as error:
        return VectorReport(implementation={}, startup_error=describe(error))
    live: Connection | None = connection
    try:
        try:
            identity = connection.initialize()
        except AdapterError as error:
            return VectorReport(implementation={}, startup_error=describe(error))
        declared = {revision.value for revision in declared_revisions(identity)}
        report = VectorReport(
            implementation=identity,
            judged=judged_profiles(identity, profile),
            chosen=profile,
        )
        failed_restarts = 0
        streak = FailureStreak(getattr(connection, "timeout", None))
        for revision, case in selected:
            if wanted is not None and revision not in wanted:
                continue
            if revision.value not in declared:
                result = case_result(
                    case,
                    revision,
                    Outcome.SKIP,
                    f"the implementation does not declare {revision.value}",
                )
            elif live is None or streak.reason is not None:
                if report.stopped is None:
                    report.stopped = (
                        "the adapter could not be restarted"
                        if live is None
                        else streak.reason
                    )
                result = case_result(
                    case,
                    revision,
                    Outcome.ERROR,
                    f"not run: {report.stopped}",
                    not_run=True,
                )
            else:
                asked = time.monotonic()
                try:
                    response = live.request(case.method, case.request_params(revision))
                except Exception as error:  # a broken adapter, or a bug of ours
                    streak.failed(error, time.monotonic() - asked)
                    result = case_result(case, revision, Outcome.ERROR, describe(error))
                    _close(live)
                    live = None
                    live, failed_restarts = _restart(connect, failed_restarts)
                else:
                    streak.succeeded()
                    result = _judge(case, revision, response)
            report.results.append(result)
            if on_result is not None:
                on_result(result)
        return report
    except BaseException:  # interrupted: no shutdown, no waiting
        if live is not None:
            abandon(live)
            live = None
        raise
    finally:
        if live is not None:
            _close(live)


INTERNAL_ERROR = -32603
"""An adapter's own failure: no verdict on the contract (docs/adapter-protocol.md)."""


def _judge(case: VectorCase, revision: Revision, response: JsonObject) -> Check:
    error = response.get("error")
    if isinstance(error, dict) and error.get("code") == INTERNAL_ERROR:
        return case_result(
            case,
            revision,
            Outcome.ERROR,
            f"the implementation failed on this case (-32603):"
            f" {str(error.get('message', ''))[:200]}",
            response=response,
        )
    try:
        judgement = judge_response(case, response)
    except Exception as error:  # a bug of ours: no verdict on this case
        return case_result(
            case,
            revision,
            Outcome.ERROR,
            f"the suite could not judge the response: {describe(error)}",
            response=response,
        )
    message = "; ".join(part for part in (judgement.reason, judgement.note) if part)
    return case_result(
        case, revision, _VERDICTS[judgement.verdict], message, response=response
    )


def _close(connection: Connection) -> None:
    # Closing is best effort: a failure to close must not cost the report.
    with contextlib.suppress(Exception):
        connection.close()


def _restart(
    connect: Callable[[], Connection], failed: int
) -> tuple[Connection | None, int]:
    while failed < MAX_RESTARTS:
        connection: Connection | None = None
        try:
            connection = connect()
            connection.initialize()
        except Exception:
            if connection is not None:
                _close(connection)
            failed += 1
            continue
        except BaseException:  # interrupted while restarting
            if connection is not None:
                abandon(connection)
            raise
        return connection, 0
    return None, failed
