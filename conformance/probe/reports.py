"""The report files of ``reqfold probe`` (docs/reports.md, "A probe's report").

The probe's checks go into the same `RunReport` ``reqfold run`` writes,
in the same four formats (`reqfold.conformance.report.writing`): its part
is ``probe``, the implementation is the harness command and the revision
judged, its traces are the sessions' requests as the fake's cache saw
them, and what only a run has (reproductions, expected failures) is left
empty.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from reqfold.conformance.probe.driver import ProbeEvidence, fresh_log_note
from reqfold.conformance.probe.judge import PART
from reqfold.conformance.probe.perturb import PERTURBATION
from reqfold.conformance.report.model import ScenarioTrace
from reqfold.conformance.report.writing import report_targets, write_report_files
from reqfold.conformance.verdict import Check, rules_level, status_of

SESSIONS = ("session", "fresh-session")
"""The names of a probe's traces: the harness's session, and the fresh one
``--perturb fresh-session`` starts."""


def _shown(check: Check, revision: str) -> Check:
    """`check` as a report shows it: in the session it judged (the trace
    named so: `SESSIONS`) under the revision judged, and with the level it
    fails at, which the probe's judge leaves to the rules it names."""
    fresh = check.detail.get(PERTURBATION) == "fresh-session"
    level = check.level or (rules_level(check.rules) if check.rules else "")
    return replace(
        check,
        scenario=SESSIONS[1] if fresh else SESSIONS[0],
        revision=revision,
        level=level,
    )


def probe_traces(
    evidence: ProbeEvidence,
    checks: Sequence[Check],
    *,
    revision: str,
    title: str,
) -> list[ScenarioTrace]:
    """One trace per session that sent a request, in the order they ran."""
    from reqfold.conformance.report.traces import request_trace

    statuses = {check.id: status_of(check, {}) for check in checks}
    traces = []
    for name, captures, owners in (
        (SESSIONS[0], evidence.captures, evidence.capture_runs),
        (SESSIONS[1], evidence.fresh_captures, evidence.fresh_capture_runs),
    ):
        if captures:
            traces.append(
                request_trace(
                    captures,
                    owners,
                    checks,
                    statuses,
                    scenario=name,
                    revision=revision,
                    title=title,
                )
            )
    return traces


def lasting_notes(evidence: ProbeEvidence, temporary: Path | None) -> list[str]:
    """The probe's notes for its report files: without the fresh session's
    log when it is in `temporary`, deleted when the probe ends (the
    terminal still names it; ``--keep`` copies it elsewhere)."""
    fresh = evidence.fresh_log_path
    if fresh is None or temporary is None or not Path(fresh).is_relative_to(temporary):
        return list(evidence.notes)
    return [note for note in evidence.notes if note != fresh_log_note(fresh)]


def write_probe_reports(
    args: argparse.Namespace,
    evidence: ProbeEvidence,
    checks: Sequence[Check],
    *,
    revision: str,
    startup_error: str | None,
    status: int,
    verdict: str,
    seconds: float,
    temporary: Path | None = None,
) -> int:
    """Write every report asked for; the exit status (2 when one could not
    be written, as for ``reqfold run``; the verdict is printed already).
    `temporary` is the folder deleted when the probe ends (`lasting_notes`)."""
    targets = report_targets(args)
    if not targets:
        return status
    from reqfold.conformance.report.model import build_report
    from reqfold.conformance.report.suite import suite_identity

    report = build_report(
        suite=suite_identity(),
        implementation={"name": args.cmd, "revisions": [revision]},
        command=args.cmd,
        options={
            "revisions": [revision],
            "parts": [PART],
            "scenarios": None,
            "strict": bool(args.strict),
            "profile": None,
        },
        checks=[_shown(check, revision) for check in checks],
        reproductions={},
        traces=probe_traces(evidence, checks, revision=revision, title=args.cmd),
        notes=lasting_notes(evidence, temporary),
        startup_error=startup_error,
        expected={},
        exit_status=status,
        verdict=verdict,
        duration=seconds,
        tool="reqfold probe",
    )
    if not write_report_files(report, targets, tool="reqfold probe"):
        return 2
    return status
