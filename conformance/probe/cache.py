"""The probe's cache judgement: its captures and runs as the judgement's input.

A harness that writes no reqfold log (the probe was told of none: no
``--log-dir``, ``--log-glob`` or ``{log_dir}``) is judged on the cache
alone (docs/spec.md section 16), with no log rule in its verdict. The
process starts are the probe's runs: the first, then the resumed one.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from reqfold.conformance.cache import (
    CacheJudgement,
    Finding,
    ProcessStart,
    calls_from_records,
    judge_cache,
)
from reqfold.conformance.probe.driver import ProbeEvidence
from reqfold.conformance.run.verdict import Check

PART = "probe"


def cache_alone(args: argparse.Namespace, evidence: ProbeEvidence) -> bool:
    """True when no log was looked for, and none was found."""
    if evidence.log_path is not None:
        return False
    words = [args.cmd or "", args.resume_cmd or ""]
    uses_dir = any("{log_dir}" in word for word in words)
    return args.log_dir is None and args.log_glob is None and not uses_dir


def process_starts(evidence: ProbeEvidence) -> list[ProcessStart]:
    """Each run's first captured request, in order (the first run `first`)."""
    starts: list[ProcessStart] = []
    seen: set[str] = set()
    for capture, run in zip(evidence.captures, evidence.capture_runs, strict=True):
        if run in seen:
            continue
        seen.add(run)
        starts.append(
            ProcessStart(
                first_index=capture.index,
                name=run,
                kind="resume" if starts else "first",
            )
        )
    return starts


def judge_probe_cache(
    args: argparse.Namespace, evidence: ProbeEvidence
) -> CacheJudgement:
    """The cache judgement of the probe's captures, with the gates asked for."""
    return judge_cache(
        calls_from_records(evidence.captures),
        starts=process_starts(evidence),
        fail_on=args.fail_on,
        max_lost_tokens=args.max_lost_tokens,
    )


def cache_checks(findings: Iterable[Finding]) -> list[Check]:
    """The findings as rows of the verdict."""
    return [
        Check(
            part=PART,
            id=finding.id,
            revision="",
            rules=finding.rules,
            outcome=finding.outcome,
            message=finding.message,
        )
        for finding in findings
    ]
