"""The probe's cache judgement: its captures and runs as the judgement's input.

A harness that writes no reqfold log (the probe was told of none: no
``--log-dir``, ``--log-glob`` or ``{log_dir}``) is judged on the cache
alone (docs/spec.md section 16), with no log rule in its verdict. The
process starts are the probe's runs: the first, then the resumed one.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import replace

from reqfold.conformance.cache import (
    CacheJudgement,
    ProcessStart,
    calls_from_records,
    judge_cache,
)
from reqfold.conformance.cache.model import ProcessKind
from reqfold.conformance.probe.driver import ProbeEvidence
from reqfold.conformance.verdict import Check
from reqfold.fakes import dump_captured_request
from reqfold.fakes.jsontypes import JsonObject

PART = "probe"


def cache_alone(args: argparse.Namespace, evidence: ProbeEvidence) -> bool:
    """True when no log was looked for, and none was found."""
    if evidence.log_path is not None:
        return False
    words = [args.cmd or "", args.resume_cmd or ""]
    uses_dir = any("{log_dir}" in word for word in words)
    return args.log_dir is None and args.log_glob is None and not uses_dir


def process_starts(evidence: ProbeEvidence) -> list[ProcessStart]:
    """Each run's first captured request, in order (the first run `first`);
    the fresh-session perturbation's first run starts a `fresh` session."""
    starts: list[ProcessStart] = []
    seen: set[str] = set()
    fresh = {run.name for run in evidence.fresh_runs}
    fresh_first = evidence.fresh_runs[0].name if evidence.fresh_runs else None
    for capture, run in evidence.captures_by_arrival():
        if run in seen:
            continue
        seen.add(run)
        kind: ProcessKind = "resume" if starts else "first"
        if run == fresh_first:
            kind = "fresh"
        elif run in fresh and not starts:
            kind = "first"
        starts.append(ProcessStart(first_index=capture.index, name=run, kind=kind))
    return starts


def expected_breaks(evidence: ProbeEvidence) -> dict[int, str]:
    """The requests where a break is expected: the compaction perturbation's
    turn and the turn after it (the summarizer, the summary replacing the
    history)."""
    expected: dict[int, str] = {}
    for turn, sent in evidence.turn_requests():
        if turn.kind in ("compact", "after-compact"):
            for index in sent:
                expected[index] = "compaction (--perturb compaction)"
    return expected


def kept_capture_lines(
    evidence: ProbeEvidence, session: str = "all"
) -> list[JsonObject]:
    """Every captured request, the fresh session's too, in arrival order,
    as ``--keep`` writes them: each process start and expected break marked
    as the capture's writer alone knows them (`process_start`,
    `expect_break`), so ``reqfold check --requests`` on the file judges as
    the probe did. `session` ``main`` or ``fresh`` keeps only that
    session's requests (the ones its log explains), its first unmarked."""
    starts = {
        start.first_index: start.kind
        for start in process_starts(evidence)
        if start.kind != "first"
    }
    expected = expected_breaks(evidence)
    fresh = {run.name for run in evidence.fresh_runs}
    lines: list[JsonObject] = []
    for capture, run in evidence.captures_by_arrival():
        if session != "all" and (run in fresh) != (session == "fresh"):
            continue
        line = dump_captured_request(capture)
        line["process_name"] = run  # the probe's name for it: `run 2`
        if capture.index in starts and (lines or session == "all"):
            line["process_start"] = starts[capture.index]
        if capture.index in expected:
            line["expect_break"] = expected[capture.index]
        lines.append(line)
    return lines


def judge_probe_cache(
    args: argparse.Namespace, evidence: ProbeEvidence
) -> CacheJudgement:
    """The cache judgement of the probe's captures, with the gates asked for."""
    return judge_cache(
        calls_from_records(capture for capture, _ in evidence.captures_by_arrival()),
        starts=process_starts(evidence),
        expected=expected_breaks(evidence),
        fail_on=args.fail_on,
        max_lost_tokens=args.max_lost_tokens,
    )


def cache_checks(findings: Iterable[Check]) -> list[Check]:
    """The cache judgement's checks as the probe's."""
    return [replace(finding, part=PART) for finding in findings]
