"""Cache stability and instance anchors: checks the log alone cannot make.

Both need to know which instance sent each captured request, which the
suite knows and the log does not:

- ``anchor/<instance>``: the first request of each instance logs its
  ``initial`` or ``resume`` snapshot (WRITER-1), even when the header did
  not change;
- ``cache/request-N``: each request of an instance extends the previous
  one, as the fake's diagnostic saw it, unless the log records a header
  change or a surface replace between them (CACHE-1); a resumed instance
  whose header did not change extends the previous instance's last
  request (CACHE-3, a SHOULD).

Pure: evidence and parsed log events in, results out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reqfold.conformance.harness.results import COMPARED, Facts, Judge, passed
from reqfold.conformance.json_text.judge_equal import same_json
from reqfold.fakes import CapturedRequest
from reqfold.reference.json_values import JsonObject
from reqfold.reference.reconstruct import (
    HEADER_TYPES,
    RebuiltRequest,
    fold_through,
    rebuild_requests,
)
from reqfold.reference.request import contract_view
from reqfold.reference.revisions import Revision

EXTENDS = ("append", "repeat")
"""Diagnostic relations under which a request extends its closest one."""


def _session_steps(
    events: list[JsonObject], revision: Revision, seed_length: int
) -> list[RebuiltRequest]:
    """The log's rebuilt steps, leaving out the seeded ones (another session's)."""
    return [
        step
        for step in rebuild_requests(events, revision)
        if step.boundary >= seed_length
    ]


def _matched_steps(
    rebuilt: list[RebuiltRequest], captures: Sequence[CapturedRequest]
) -> list[int | None]:
    """For each capture, the position of its step among the log's rebuilds.

    Matches as the reconstruction check does (CHECK-1). When some capture
    matches no rebuild (the harness sent what its log does not say) but
    the log's certainly-sent steps are as many as the captures, they are
    paired in order: the log still says where headers changed, and the
    fake's diagnostic still says whether the prompt extended the last one.
    Otherwise a capture that matches nothing is None, and nothing is
    inferred from it.
    """
    matched: list[int | None] = [None] * len(captures)
    position = 0
    for number, step in enumerate(rebuilt):
        if position >= len(captures):
            break
        body = captures[position].body
        same = isinstance(body, dict) and same_json(
            step.contract_body(), contract_view(body), ordered=False
        )
        if same:
            matched[position] = number
            position += 1
        elif step.sent:
            position += 1
    if None in matched:
        sent = [number for number, step in enumerate(rebuilt) if step.sent]
        if len(sent) == len(captures):
            return list(sent)
    return matched


def _anchor_checks(
    judge: Judge, events: list[JsonObject], rebuilt: list[RebuiltRequest]
) -> None:
    """The first request of every instance logs its anchoring snapshot (WRITER-1).

    The log cannot say where an instance starts; the driver noted how many
    events the log held when each instance started. The instance's first
    step that logged a header event or got a response (a step cancelled
    before it logged anything sent nothing) must have logged a
    ``request/header`` snapshot: ``initial`` when no header event came
    before it, ``resume`` otherwise, even when the header is unchanged.
    """
    starts = judge.evidence.instance_starts
    for position, (owner, first_seq) in enumerate(starts):
        end = starts[position + 1][1] if position + 1 < len(starts) else len(events)
        step = next(
            (
                step
                for step in rebuilt
                if first_seq <= step.boundary < end and step.evidence != "none"
            ),
            None,
        )
        if step is None:
            continue
        earlier = any(
            event["type"] in HEADER_TYPES for event in events[: step.boundary]
        )
        wanted = "resume" if earlier else "initial"
        event = events[step.header_seq] if step.header_seq is not None else None
        found = (
            event["data"].get("reason")
            if event is not None and event["type"] == "request/header"
            else None
        )
        judge.add(
            f"anchor/{owner}",
            ("WRITER-1",),
            passed(found == wanted),
            ""
            if found == wanted
            else f"the first request of instance {owner} (turn {step.turn},"
            f" step {step.step}) logged "
            + (f"a snapshot with reason {found!r}" if found else "no snapshot")
            + f"; expected {'an' if wanted == 'initial' else 'a'} {wanted!r} snapshot",
            facts=Facts(
                expected={"reason": wanted},
                found={"reason": found},
                difference=COMPARED,
            ),
        )


def stability_checks(
    judge: Judge, events: list[JsonObject], seed_length: int = 0
) -> None:
    """The anchor and cache checks of one run (module docstring).

    Steps among the first `seed_length` events (seeded from another
    session, whose requests this one did not send) are left out.
    """
    evidence = judge.evidence
    captures = evidence.captures
    owners = evidence.capture_instances
    revision = evidence.revision
    rebuilt = _session_steps(events, revision, seed_length)
    matched = _matched_steps(rebuilt, captures)
    _anchor_checks(judge, events, rebuilt)
    for later in range(1, len(captures)):
        earlier = later - 1
        first, second = matched[earlier], matched[later]
        if first is None or second is None:
            continue
        step, previous = rebuilt[second], rebuilt[first]
        same_instance = owners[earlier] == owners[later]
        why_not = _excuse(events, previous, step)
        if same_instance:
            if why_not is not None:
                continue
            rules: tuple[str, ...] = ("CACHE-1",)
        else:
            if previous.header.get("messageSuffix"):
                continue  # the history grows in front of the suffix (CACHE-3)
            if not _resume_unchanged(events, step.header_seq, revision):
                continue
            rules = ("CACHE-3",)
        diagnostic = captures[later].diagnostic
        if diagnostic is None:
            continue
        ok = (
            diagnostic["relation"] in EXTENDS
            and diagnostic["closest_request"] == captures[earlier].index
        )
        judge.add(
            f"cache/request-{later}",
            rules,
            passed(ok),
            "" if ok else _cache_message(earlier, later, diagnostic, same_instance),
            facts=_cache_facts(captures, later, judge.step_of_request(later)),
            detail={CACHE_REQUEST: later},
        )


CACHE_REQUEST = "cacheRequest"
"""The `Check.detail` member of a cache check that holds the position of the
request it judged (reports draw the check on that request)."""


def _cache_facts(
    captures: Sequence[CapturedRequest], position: int, step: int | None
) -> Facts:
    """What a cache check's reproduction shows: the relation to the request
    before that was expected, the fake's diagnostic found, and the request
    field where the cache broke, at the `step` the request left in."""
    positions = {capture.index: n for n, capture in enumerate(captures)}
    diagnostic = captures[position].diagnostic
    expected: JsonObject = {"relation": ["append", "repeat"], "closest": position - 1}
    if diagnostic is None:
        return Facts(step=step, expected=expected)
    closest = diagnostic["closest_request"]
    found: JsonObject = {
        "relation": diagnostic["relation"],
        "closest": None if closest is None else positions.get(closest),
        "promptTokens": diagnostic["prompt_tokens"],
        "cachedTokens": diagnostic["cached_tokens"],
    }
    divergence = diagnostic["divergence"] or diagnostic["echo_divergence"]
    if divergence is not None:
        found["divergence"] = dict(divergence)
    return Facts(
        step=step,
        expected=expected,
        found=found,
        difference=COMPARED if divergence is None else divergence["field"],
    )


def _excuse(
    events: list[JsonObject], previous: RebuiltRequest, step: RebuiltRequest
) -> str | None:
    """What in the log explains a prompt that does not extend the previous one.

    A header event or a surface replace logged after the previous request
    was composed and before this step's boundary (a step aborted before its
    request left may have logged one), or the step's own header event; or,
    in ``request-messages``, a ``messageSuffix`` on the previous request,
    which the history then grows in front of. The previous step's own
    header event is already in the previous request: it explains nothing.
    """
    if step.header_seq is not None:
        return f"a header event at seq {step.header_seq}"
    after = previous.boundary if previous.header_seq is None else previous.header_seq
    for event in events[after + 1 : step.boundary]:
        if event["type"] in HEADER_TYPES:
            return f"a header event at seq {event['seq']}"
        if isinstance(event.get("surfaceOp"), dict):
            return f"a surface replace at seq {event['seq']}"
    if previous.header.get("messageSuffix"):
        return "the previous request's messageSuffix"
    return None


def _resume_unchanged(
    events: list[JsonObject], header_seq: int | None, revision: Revision
) -> bool:
    """Whether a new instance's snapshot equals the header in force before it."""
    if header_seq is None or header_seq == 0:
        return False
    snapshot = events[header_seq]
    if snapshot.get("type") != "request/header":
        return False
    if snapshot["data"].get("reason") != "resume":
        return False
    before = fold_through(events, header_seq - 1, revision)
    return before is not None and same_json(before, snapshot["data"].get("header"))


def _cache_message(
    earlier: int, later: int, diagnostic: Any, same_instance: bool
) -> str:
    what = "the previous request" if same_instance else "the previous instance's last"
    text = (
        f"request {later} does not extend {what} (request {earlier}):"
        f" {_what_the_fake_saw(diagnostic)}"
    )
    divergence = diagnostic.get("divergence")
    if isinstance(divergence, dict):
        text += (
            f", first difference in {divergence.get('field')} at character"
            f" {divergence.get('char_offset')}: earlier"
            f" {_quoted(divergence.get('earlier'))},"
            f" now {_quoted(divergence.get('current'))}"
        )
    cached = diagnostic.get("cached_tokens")
    return text + f" ({cached} of {diagnostic.get('prompt_tokens')} tokens cached)"


def _what_the_fake_saw(diagnostic: Any) -> str:
    """The fake's relation of the request to the closest earlier one, in words."""
    relation = diagnostic.get("relation")
    closest = diagnostic.get("closest_request")
    if relation == "diverged":
        if closest is None:
            return "the fake saw it diverge from every earlier request"
        return f"the fake saw it diverge from its request {closest}"
    if relation == "first":
        return "the fake saw it extend no earlier request"
    of = "" if closest is None else f" of its request {closest}"
    return f"the fake saw it as {json.dumps(relation)}{of}"


def _quoted(text: object) -> str:
    """An excerpt as a JSON string, as every error line quotes one."""
    return json.dumps(text, ensure_ascii=False)
