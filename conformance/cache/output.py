"""The cache judgement as text for a terminal and as JSON (pure)."""

from __future__ import annotations

import dataclasses
from typing import Any

from reqfold.conformance.cache.model import CacheJudgement
from reqfold.conformance.outcomes import MARKS, Outcome
from reqfold.conformance.summary import verdict_line
from reqfold.conformance.verdict import verdict_text

CONFORMANT, BROKEN, NO_VERDICT = 0, 1, 3
NO_VERDICT_REASONS = {NO_VERDICT: "no request the fake answered"}
"""Why the cache judgement gives no verdict, by exit status (`verdict_text`)."""


def cache_verdict(judgement: CacheJudgement, *, strict: bool = False) -> str:
    """The verdict in the words of every other command (`verdict_text`):
    ``CONFORMANT``, ``CONFORMANT (with SHOULD warnings)``, ``NOT CONFORMANT:
    a MUST rule is broken``, ..., ``NO VERDICT: no request the fake answered``."""
    status = cache_status(judgement, strict=strict)
    return verdict_text(status, judgement.findings, reasons=NO_VERDICT_REASONS)


ACROSS = {
    "within": "after request",
    "resume": "resume of request",
    "fresh": "fresh session after request",
}
"""How a break relates to the request it is compared with, in words."""


def cache_status(judgement: CacheJudgement, *, strict: bool = False) -> int:
    """0 when no MUST finding failed (and, with `strict`, none warned), else 1;
    3 (no verdict) when no request was judged: nothing shows the cache kept."""
    if not judgement.rows:
        return NO_VERDICT
    bad = {Outcome.FAIL, Outcome.WARN} if strict else {Outcome.FAIL}
    return BROKEN if any(f.outcome in bad for f in judgement.findings) else CONFORMANT


def truncation_text(judgement: CacheJudgement) -> str:
    """What the capture lacks, in one line (`judgement.truncated`)."""
    parts = []
    if judgement.begins_at:
        parts.append(
            f"the capture begins at index {judgement.begins_at}: the"
            f" {judgement.begins_at} request(s) before it are not in it"
        )
    if judgement.missing:
        parts.append(f"{judgement.missing} request index(es) are missing between lines")
    return (
        "note: truncated capture: "
        + "; ".join(parts)
        + " (as `reqfold fake serve --capture-limit` drops the oldest); its first"
        " request is compared with nothing before it"
    )


def lost_cost(judgement: CacheJudgement, price: tuple[float, float]) -> float:
    """What the lost tokens cost: each was paid at the uncached price instead
    of the cached one (`price`: per million input tokens, uncached and cached)."""
    uncached, cached = price
    return judgement.lost_tokens * (uncached - cached) / 1_000_000


def judgement_json(
    judgement: CacheJudgement,
    price: tuple[float, float] | None = None,
    *,
    strict: bool = False,
) -> dict[str, Any]:
    """The JSON form: the verdict (`status`, the exit status, and `verdict`,
    its line), every member of the judgement, plus its totals (and, given a
    price, `lost_cost`); each timeline row and break with what the
    provider's own diagnostics said (`provider_said`, null when the request
    did not opt in)."""
    said = judgement.provider_said
    # to 1e-10 of the currency unit: a price per million tokens (1e-6 per
    # token, four digits) needs no more, and the float's noise goes
    # (1.2800000000000001e-05 is 1.28e-05)
    extra = (
        {} if price is None else {"lost_cost": round(lost_cost(judgement, price), 10)}
    )
    status = cache_status(judgement, strict=strict)
    return {
        "status": status,
        "verdict": cache_verdict(judgement, strict=strict),
        **extra,
        "prompt_tokens": judgement.prompt_tokens,
        "cached_tokens": judgement.cached_tokens,
        "lost_tokens": judgement.lost_tokens,
        "streams": [dataclasses.asdict(item) for item in judgement.streams],
        "static_opening": dataclasses.asdict(judgement.static)
        if judgement.static is not None
        else None,
        "breaks": [
            {**dataclasses.asdict(item), "provider_said": said.get(item.index)}
            for item in judgement.breaks
        ],
        "echoes": [dataclasses.asdict(item) for item in judgement.echoes],
        "timeline": [
            {**dataclasses.asdict(item), "provider_said": said.get(item.index)}
            for item in judgement.rows
        ],
        "findings": [
            {
                "id": check.id,
                "rules": list(check.rules),
                "outcome": check.outcome.value,
                "message": check.message,
            }
            for check in judgement.findings
        ],
        "skipped": [{"index": index, "why": why} for index, why in judgement.skipped],
        "begins_at": judgement.begins_at,
        "missing_requests": judgement.missing,
        "truncated": judgement.truncated,
    }


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def render_text(
    judgement: CacheJudgement,
    *,
    strict: bool = False,
    verdict: bool = True,
    price: tuple[float, float] | None = None,
    colour: bool = False,
) -> str:
    """The streams, the timeline, one line per break, the findings, the verdict
    (``Verdict: ...``, coloured when `colour`, as every command prints it)."""
    lines = ["cache judgement (from the requests alone)", ""]
    if judgement.truncated:
        lines += [truncation_text(judgement), ""]
    lines.append("streams:")
    lines.extend(
        f"  {stream.name:<8} {stream.requests:>4} request(s)"
        f"  {stream.share:6.1%} of prompt tokens"
        f"  cached {stream.cached_tokens}  lost {stream.lost_tokens}"
        f"  breaks {stream.breaks}  (first: request {stream.first_index};"
        f" tools: {', '.join(stream.tool_names) or 'none'})"
        for stream in judgement.streams
    )
    total = judgement.prompt_tokens
    ratio = judgement.cached_tokens / total if total else 0.0
    lines.append(
        f"  session: {total} prompt tokens, {judgement.cached_tokens} cached"
        f" ({ratio:.1%}), {judgement.lost_tokens} lost against a pure append"
        + (
            ""
            if price is None
            else f" (costing {lost_cost(judgement, price):.6f} at the prices given)"
        )
    )
    if judgement.static is not None:
        static = judgement.static
        text = (
            f"  static opening: {static.static_tokens} of {static.opening_tokens}"
            f" opening tokens kept across {static.starts} process start(s)"
        )
        if static.breakpoint_tokens == 0 and static.static_tokens > 0:
            # every breakpoint sits after a part that changed (a date line
            # before it): the static part is written again on each start
            text += "; no cache breakpoint covers any of it"
        elif static.breakpoint_tokens is not None:
            text += f"; a cache breakpoint covers {static.breakpoint_tokens}"
        lines.append(text)
    lines += ["", "timeline:"]
    lines.append(
        "  index  process     stream    prompt  cached  written  lost  relation"
        "     cause"
    )
    for row in judgement.rows:
        cause = row.cause + (" (expected)" if row.expected and row.cause else "")
        if (said := judgement.provider_said.get(row.index)) is not None:
            cause += ("; " if cause else "") + f"the provider said: {said}"
        lines.append(
            f"  {row.index:>5}  {row.process[:10]:<10}  {row.stream[:8]:<8}"
            f"  {row.prompt:>6}  {_count(row.cached):>6}  {_count(row.written):>7}"
            f"  {row.lost:>4}  {row.relation:<11}  {cause}"
        )
    for index, why in judgement.skipped:
        lines.append(f"  {index:>5}  left out: {why}")
    if judgement.breaks:
        lines += ["", "breaks:"]
    for item in judgement.breaks:
        expected = f" (expected: {item.expected})" if item.expected else ""
        lines.append(
            f"  request {item.index} ({item.stream}, {ACROSS[item.across]}"
            f" {item.previous}): {item.cause}{expected}, {item.lost} tokens lost"
            f" [{', '.join(item.rules)}]"
        )
        if item.detail:
            lines.append(f"    {item.detail}")
        if (said := judgement.provider_said.get(item.index)) is not None:
            lines.append(f"    the provider said: {said}")
        lines.append(f"    at {item.field}")
        lines.append(f"    was: {item.earlier!r}")
        lines.append(f"    now: {item.current!r}")
    if judgement.echoes:
        lines += ["", "echoes:"]
    for echo in judgement.echoes:
        lines.append(
            f"  request {echo.index} ({echo.stream}): the assistant turn of request"
            f" {echo.previous} re-sent changed at {echo.field}:"
            f" returned {echo.returned!r}, echoed {echo.echoed!r}"
        )
    if not verdict:  # the caller prints the findings with its own
        return "\n".join(lines)
    lines += ["", "findings:"]
    for finding in judgement.findings:
        lines.append(
            f"  {MARKS[finding.outcome]} {finding.id} [{', '.join(finding.rules)}]"
            + (f": {finding.message}" if finding.message else "")
        )
    status = cache_status(judgement, strict=strict)
    verdict_words = cache_verdict(judgement, strict=strict)
    lines += ["", verdict_line(status, verdict_words, colour=colour)]
    return "\n".join(lines)
