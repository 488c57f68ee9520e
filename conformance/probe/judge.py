"""Judging a probe session: evidence in, checks and a cache timeline out (pure).

The log and the captures are judged exactly as ``reqfold run`` judges a
scenario's (`reqfold.conformance.harness.checks.judge`): every rule of the offline
checker on the log, the reconstruction theorem against the captured
requests, each process's first request anchoring its instance (WRITER-1,
the resume snapshot), and cache stability request by request (CACHE-1
within a process, CACHE-3 across a resume). To these the probe adds its
expected counts (CHECK-3): a log was written, and every turn fed was
handled and sent at least one request. No log, no request, or fewer turns
handled than fed is a failure whatever the harness's exit status.

The revision: ``--revision``, else the storage line's, else inferred from
the header events (`reqfold.conformance.check.revision_inference`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reqfold.conformance.cache import CacheJudgement
from reqfold.conformance.cache.provider_said import provider_said
from reqfold.conformance.check import RECONSTRUCTION_RULES
from reqfold.conformance.check.revision_inference import (
    declared_revision,
    infer_revision,
)
from reqfold.conformance.harness.checks import judge
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.log_file import log_pieces
from reqfold.conformance.harness.scenarios import Scenario
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.probe.driver import ProbeEvidence, ProcessRecord
from reqfold.conformance.probe.perturb import (
    AT_RESUME,
    PERTURBATION_REQUEST,
    Request,
    judge_compaction,
    judge_fresh_session,
    judge_resume,
)
from reqfold.conformance.verdict import Check
from reqfold.reference.revisions import LATEST, Revision

PART = "probe"


@dataclass(frozen=True, slots=True)
class RevisionChoice:
    """The revision the log is judged under, and where it came from."""

    revision: Revision
    source: str


def choose_revision(
    log: bytes, forced: Revision | None, path: str | None = None
) -> RevisionChoice:
    """``--revision``, else the storage line's, else what the header events fit.

    An empty `log` with a `path` is a log left on disk: it is read from the
    file, streaming."""
    if forced is not None:
        return RevisionChoice(forced, "--revision")
    if not log and path is not None:
        try:
            return _choose_from(lambda: log_pieces(path))
        except OSError:
            return RevisionChoice(LATEST, "default; the log could not be read")
    return _choose_from(lambda: io.BytesIO(log))


def _choose_from(lines: Callable[[], Iterable[bytes]]) -> RevisionChoice:
    first = next(iter(lines()), b"")
    declared = declared_revision(first)
    if declared is not None:
        try:
            return RevisionChoice(Revision(declared), "storage line")
        except ValueError:
            return RevisionChoice(LATEST, f"unknown revision {declared!r}; default")
    inference = infer_revision(iter(lines()))
    if inference is None:  # pragma: no cover - declared_revision said none
        return RevisionChoice(LATEST, "default")
    return RevisionChoice(inference.revision, inference.describe())


def _scenario(revision: Revision) -> Scenario:
    """The probe as a scenario with no script: only the log checks apply."""
    return Scenario(
        id=PART,
        title="a harness probed as a black box",
        revisions=(revision,),
        rules=(),
        setup={},
        replies=(),
        steps=(),
        expect=(),
        path=Path("<probe>"),
    )


def _check(
    check_id: str, rules: tuple[str, ...], outcome: Outcome, message: str
) -> Check:
    return Check(
        part=PART,
        id=check_id,
        revision="",
        rules=rules,
        outcome=outcome,
        message=message,
    )


def count_checks(evidence: ProbeEvidence) -> list[Check]:
    """CHECK-3: a log, and every turn fed handled with a request of its own."""
    checks = []
    if not evidence.has_log:
        checks.append(
            _check(
                "log",
                ("CHECK-3", "JSONL-1"),
                Outcome.FAIL,
                "the harness wrote no session log (none appeared or changed where"
                " the probe looked)",
            )
        )
    for run in evidence.runs:
        if run.start_error is not None:
            continue
        checks.append(_turn_check(run, has_log=evidence.has_log))
    return checks


def turn_checks(evidence: ProbeEvidence) -> list[Check]:
    """CHECK-3 without a log: every turn fed handled, each with a request."""
    return [
        _turn_check(run, has_log=False)
        for run in evidence.runs
        if run.start_error is None
    ]


def _turn_check(run: ProcessRecord, *, has_log: bool = True) -> Check:
    silent = [
        number
        for number, turn in enumerate(run.turns, start=1)
        if turn.handled and turn.captures_after == turn.captures_before
    ]
    problems = []
    logged = run.turn_ends_after - run.turn_ends_before
    if has_log and run.handled and logged < run.handled:
        problems.append(
            f"the log shows {logged} turn(s) ended for the {run.handled} this"
            " process handled"
        )
    if run.handled < run.planned:
        problems.append(
            f"{run.handled} of {run.planned} turn(s) handled: {run.problem}"
            if run.problem
            else f"{run.handled} of {run.planned} turn(s) handled"
        )
    if silent:
        where = " in the log" if has_log else ""
        problems.append(
            f"turn(s) {', '.join(map(str, silent))} of {run.name} ended{where}"
            " without a request reaching the provider"
        )
    if problems and run.exit_status == 0 and not run.problem_says_exit:
        problems.append("(the harness exited 0 all the same)")
    return _check(
        f"{run.name.replace(' ', '-')}/turns",
        ("CHECK-3",),
        Outcome.FAIL if problems else Outcome.PASS,
        "; ".join(problems),
    )


def log_checks(
    evidence: ProbeEvidence, choice: RevisionChoice, *, wire: str | None = None
) -> list[Check]:
    """Every check ``reqfold run`` makes of a scenario's log and captures.

    `wire`: the dialect the requests went out in, when it is not chat
    completions. The wire mapping (docs/spec.md section 12) defines the
    chat-completions request a log rebuilds, so requests in another
    dialect are not compared with the log: the reconstruction rules are
    skipped, said in one check, rather than failed (the harness did
    nothing wrong) or passed (nothing was compared).
    """
    if evidence.log_path is None or not evidence.has_log:
        return []
    runs = [run for run in evidence.runs if run.start_error is None]
    harness_evidence = Evidence(
        scenario=_scenario(choice.revision),
        revision=choice.revision,
        log_path=Path(evidence.log_path),
        log=evidence.log,
        log_size=evidence.log_size,
        captures=list(evidence.captures),
        capture_instances=list(evidence.capture_runs),
        instance_starts=[(run.name, run.events_before) for run in runs],
        wire_compared=wire is None,
    )
    checks = [
        Check(
            part=PART,
            id=result.name,
            revision=result.revision,
            rules=result.rules,
            outcome=result.outcome,
            message=result.message,
            name=result.name,
            expected=result.expected,
            found=result.found,
            first_difference=result.first_difference,
            detail=result.detail,
        )
        for result in judge(harness_evidence)
    ]
    if wire is None:
        return checks
    compared = set(RECONSTRUCTION_RULES)
    kept = [check for check in checks if not set(check.rules) <= compared]
    kept.append(
        _check(
            "requests-not-compared",
            RECONSTRUCTION_RULES,
            Outcome.SKIP,
            f"the requests went out in the {wire} dialect; the log rebuilds"
            " chat-completions requests (the wire mapping, docs/spec.md"
            " section 12), so they are not compared with it. The log's own"
            " checks, the anchors and the cache checks still apply.",
        )
    )
    return kept


# ------------------------------------------------------------ perturbations


def perturbation_checks(
    evidence: ProbeEvidence, judgement: CacheJudgement | None = None
) -> list[Check]:
    """One check per perturbation asked for, judged from the fake's
    diagnostics; where the cache judgement found a break at the request a
    line is about, its cause and the tokens lost are added."""
    asked = evidence.perturbations
    if not asked:
        return []
    records = [*evidence.runs, *evidence.fresh_runs]
    position = {run.name: number for number, run in enumerate(records)}
    requests = [
        Request(
            index=capture.index,
            process=position[owner],
            diagnostic=capture.diagnostic,
            body=capture.body,
        )
        for capture, owner in evidence.captures_by_arrival()
    ]
    lines = []
    at_resume = [name for name in asked if name in AT_RESUME]
    if at_resume:
        resumed = next((r for r in evidence.runs if r.phase == "resumed"), None)
        clock = None
        if resumed is not None and "next-day" in at_resume:
            clock = resumed.clock_problem
        lines.append(
            judge_resume(
                at_resume,
                requests,
                position[resumed.name] if resumed is not None else len(records),
                clock_problem=clock,
                applied=evidence.workspace_change,
            )
        )
    if "compaction" in asked:
        during, after, follow_up = _compaction_requests(evidence)
        lines.append(judge_compaction(requests, during, follow_up, after))
    if "fresh-session" in asked:
        boundary = (
            position[evidence.fresh_runs[0].name]
            if evidence.fresh_runs
            else len(records)
        )
        lines.append(judge_fresh_session(requests, boundary))
    breaks = {item.index: item for item in judgement.breaks} if judgement else {}
    checks = []
    for line in lines:
        message = line.message
        at = line.detail.get(PERTURBATION_REQUEST)
        found = breaks.get(at) if isinstance(at, int) else None
        if found is not None:
            detail = f": {found.detail}" if found.detail else ""
            message += (
                f" [cause: {found.cause}{detail}; {found.lost} token(s) lost"
                " against a pure append]"
            )
        checks.append(replace(line, message=message))
    return checks


def _compaction_requests(
    evidence: ProbeEvidence,
) -> tuple[list[int], list[int], list[int]]:
    """The request indices of the compaction turn and of the two after it."""
    during: list[int] = []
    after: list[int] = []
    follow_up: list[int] = []
    for turn, sent in evidence.turn_requests():
        if turn.kind == "compact":
            during.extend(sent)
        elif turn.kind == "after-compact":
            after.extend(sent)
        elif turn.kind == "follow-up":
            follow_up.extend(sent)
    return during, after, follow_up


# ---------------------------------------------------------------- the timeline


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineRow:
    """One captured request of the session, as the fake counted it."""

    run: str
    turn: int | None
    index: int
    status: int
    prompt: int
    cached: int
    uncached: int
    note: str
    broke: bool


def timeline(evidence: ProbeEvidence) -> list[TimelineRow]:
    """Per turn, each request's cached and uncached tokens and why it missed;
    the fresh session's (perturbation) too, in arrival order."""
    turn_of: dict[int, tuple[str, int]] = {}
    number = 0
    by_run: dict[str, list[Any]] = {}
    pairs = evidence.captures_by_arrival()
    for capture, run in pairs:
        by_run.setdefault(run, []).append(capture)
    for record in [*evidence.runs, *evidence.fresh_runs]:
        mine = by_run.get(record.name, [])
        for turn in record.turns:
            number += 1
            for capture in mine[turn.captures_before : turn.captures_after]:
                turn_of[capture.index] = (record.name, number)
    rows = []
    for position, (capture, run) in enumerate(pairs):
        diagnostic = capture.diagnostic
        usage = capture.usage or {}
        prompt = _int(usage.get("prompt_tokens"))
        cached = _int(usage.get("prompt_cache_hit_tokens", _cached_detail(usage)))
        note, broke = "", False
        if diagnostic is not None:
            prompt = diagnostic["prompt_tokens"]
            cached = diagnostic["cached_tokens"]
            note, broke = _explain(diagnostic, position)
        elif capture.status != 200:
            note = f"answered {capture.status}"
        owner = turn_of.get(capture.index)
        rows.append(
            TimelineRow(
                run=run,
                turn=owner[1] if owner else None,
                index=capture.index,
                status=capture.status,
                prompt=prompt,
                cached=cached,
                uncached=max(0, prompt - cached),
                note=note,
                broke=broke,
            )
        )
    return rows


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _cached_detail(usage: dict[str, Any]) -> object:
    details = usage.get("prompt_tokens_details")
    return details.get("cached_tokens") if isinstance(details, dict) else 0


def _explain(diagnostic: Any, position: int) -> tuple[str, bool]:
    """What the fake saw, and whether the cache broke here."""
    relation = diagnostic["relation"]
    closest = diagnostic.get("closest_request")
    if relation == "first":
        return (
            ("first request", False)
            if position == 0
            else (
                "cache broke: shares no opening with any earlier request",
                True,
            )
        )
    said = provider_reason(diagnostic.get("provider"))
    if relation in ("append", "repeat"):
        echo = diagnostic.get("echo_divergence")
        text = f"extends #{closest}" if relation == "append" else f"repeats #{closest}"
        if isinstance(echo, dict):
            text += "; the reply was re-sent differently: " + _where(echo)
        return text + said, isinstance(echo, dict)
    divergence = diagnostic.get("divergence")
    where = _where(divergence) if isinstance(divergence, dict) else "?"
    return f"cache broke: differs from #{closest} at {where}" + said, True


def provider_reason(answered: Any) -> str:
    """The note `; the provider said: ...` for what the provider's own cache
    diagnostics answered (the fake's diagnostic keeps it under `provider`),
    or "" when the request named no earlier answer."""
    said = provider_said(answered)
    return "" if said is None else f"; the provider said: {said}"


def _where(divergence: dict[str, Any]) -> str:
    place = divergence.get("field") or divergence.get("segment")
    if divergence.get("cause") == "content shape":
        place = f"{place} (content shape only: a string against one text part)"
    return (
        f"{place}, character {divergence.get('char_offset')}:"
        f" earlier {_short(divergence.get('earlier'))},"
        f" now {_short(divergence.get('current'))}"
    )


def _short(text: object, limit: int = 80) -> str:
    value = repr(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"
