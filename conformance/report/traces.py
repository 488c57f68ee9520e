"""Each scenario run's requests as the fake provider's prompt cache saw them.

For every request the session sent: its prompt tokens, how many were
cached and how many were not (the fake's usage), and whether the cache
broke there, that is whether the request does not extend the request
before it (the fake's relation is neither ``append`` nor ``repeat`` of
that request). Where it broke, the fake's first-divergence diagnostic says
why: the first field that differs, at which character, with both
excerpts. The cache check that judged the request (``cache/request-N``)
is linked, so a report tells a break the log explains (a header change:
no check) from one that breaks the contract (a failing check). Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from reqfold.conformance.cache import ProcessStart, calls_from_records, judge_cache
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.stability import CACHE_REQUEST
from reqfold.conformance.report.model import RequestPoint, ScenarioTrace
from reqfold.conformance.verdict import Check
from reqfold.fakes import CapturedRequest

EXTENDS = ("append", "repeat")


def scenario_trace(
    evidence: Evidence, checks: Iterable[Check], statuses: dict[str, str]
) -> ScenarioTrace:
    """The trace of one scenario run; `checks` are its results, `statuses`
    their report statuses by id."""
    return request_trace(
        evidence.captures,
        evidence.capture_instances,
        checks,
        statuses,
        scenario=evidence.scenario.id,
        revision=evidence.revision.value,
        title=evidence.scenario.title,
    )


def request_trace(
    captures: Sequence[CapturedRequest],
    instances: Sequence[str],
    checks: Iterable[Check],
    statuses: dict[str, str],
    *,
    scenario: str,
    revision: str,
    title: str,
) -> ScenarioTrace:
    """The trace of one session's `captures` (each made by the process
    named in `instances`), whichever tool sent them: a scenario run, or
    the harness ``reqfold probe`` drove."""
    cache_checks = {
        judged: check.id
        for check in checks
        if isinstance(judged := check.detail.get(CACHE_REQUEST), int)
    }
    positions = {capture.index: n for n, capture in enumerate(captures)}
    points = []
    for position, capture in enumerate(captures):
        diagnostic = capture.diagnostic
        instance = instances[position] if position < len(instances) else ""
        check = cache_checks.get(position)
        check_status = None if check is None else statuses.get(check)
        if diagnostic is None:
            points.append(
                RequestPoint(
                    position=position,
                    instance=instance,
                    check=check,
                    check_status=check_status,
                    prompt_tokens=0,
                    cached_tokens=0,
                    uncached_tokens=0,
                    relation=None,
                    closest=None,
                    broke=position > 0,
                    why=f"the fake answered status {capture.status}, with no usage",
                )
            )
            continue
        closest_index = diagnostic["closest_request"]
        closest = None if closest_index is None else positions.get(closest_index)
        relation = diagnostic["relation"]
        broke = position > 0 and not (relation in EXTENDS and closest == position - 1)
        divergence = diagnostic["divergence"] or diagnostic["echo_divergence"]
        why = ""
        if broke:
            why = _why(relation, closest, divergence, diagnostic["echo_divergence"])
        points.append(
            RequestPoint(
                position=position,
                instance=instance,
                check=check,
                check_status=check_status,
                prompt_tokens=diagnostic["prompt_tokens"],
                cached_tokens=diagnostic["cached_tokens"],
                uncached_tokens=diagnostic["uncached_tokens"],
                relation=relation,
                closest=closest,
                broke=broke,
                why=why,
                first_difference=None
                if not broke or divergence is None
                else divergence["field"],
            )
        )
    return ScenarioTrace(
        scenario=scenario,
        revision=revision,
        title=title,
        requests=tuple(_judged(captures, instances, points)),
    )


def _judged(
    captures: Sequence[CapturedRequest],
    instances: Sequence[str],
    points: list[RequestPoint],
) -> list[RequestPoint]:
    """The points with the cache judgement's stream, cause and tokens lost.

    The judgement sees the requests alone; a break the log explains (no
    failing or warning cache check) is marked expected, as is one the
    judgement expects by its shape.
    """
    starts: list[ProcessStart] = []
    for position, capture in enumerate(captures):
        instance = instances[position] if position < len(instances) else ""
        if not starts or starts[-1].name != instance:
            starts.append(
                ProcessStart(
                    first_index=capture.index,
                    name=instance,
                    kind="resume" if starts else "first",
                )
            )
    judgement = judge_cache(calls_from_records(captures), starts=starts)
    rows = {row.index: row for row in judgement.rows}
    judged = []
    for point, capture in zip(points, captures, strict=True):
        row = rows.get(capture.index)
        if row is None:
            judged.append(point)
            continue
        contract = point.check_status in _BREAKS_CONTRACT
        judged.append(
            dataclasses.replace(
                point,
                stream=row.stream,
                cause=row.cause if point.broke else "",
                lost_tokens=row.lost if point.broke else 0,
                expected=point.broke and (row.expected or not contract),
            )
        )
    return judged


_BREAKS_CONTRACT = frozenset({"fail", "warn", "error", "xfail", "xpass"})
"""Statuses of a cache check that say the break broke the contract."""


def _why(relation: str, closest: int | None, divergence: object, echo: object) -> str:
    if relation == "first":
        return "no earlier request shares its opening: nothing was cached"
    other = "request ?" if closest is None else f"request {closest}"
    if isinstance(divergence, dict):
        kind = "re-rendered the reply" if divergence is echo else "diverged"
        return (
            f"{kind} from {other} at {divergence.get('field')} (character"
            f" {divergence.get('char_offset')}): earlier {divergence.get('earlier')!r},"
            f" now {divergence.get('current')!r}"
        )
    return f"{relation} of {other}, not of the request just before it"
