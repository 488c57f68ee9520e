"""The cache judgement: captured requests and process starts in, findings out.

Pure (no I/O, no clock): `judge_cache` reads the requests one at a time and
keeps, per stream, only the last request's rendered prompt, so memory is
bounded by a few bodies, not by the capture.

For each request, in capture order:

1. its **process** is the latest `ProcessStart` at or before its index;
2. its **stream** is the stream whose last request's conversation it
   continues, else the stream whose opening is most alike
   (`reqfold.conformance.cache.streams`), else a new one;
3. it is compared with the stream's previous request: in the same
   process it must extend it (`CACHE-1` on the main stream, `STREAM-3` on
   a side stream); the first request of a resumed process must extend the
   last one of the process before (`CACHE-3`); the first request of a
   fresh session must keep the previous session's opening (`STREAM-2`);
4. a request that does not extend gets a cause (`causes.classify`) and the
   tokens it lost against a pure append: what the fake's cache rule would
   have cached had it extended the previous request, minus what the shared
   prefix gives. A declared break (`expected`) or a recognised shape (a
   model change, a summary replacing messages, a cleared conversation)
   is expected: shown, never a failure;
5. a request that appends the provider's reply is checked for echo
   fidelity (`STREAM-4`).

The main stream is the one holding the most prompt tokens; the others are
side streams, named in the order they first appear.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from reqfold.conformance.cache.capture import CapturedCall
from reqfold.conformance.cache.causes import (
    BENIGN,
    EXPECTED_SHAPES,
    Cause,
    classify,
)
from reqfold.conformance.cache.echo import NOT_APPLICABLE, echo_difference
from reqfold.conformance.cache.model import (
    GATE,
    PART,
    Break,
    CacheJudgement,
    EchoFinding,
    ProcessStart,
    Relation,
    Row,
    StaticOpening,
    StreamSummary,
)
from reqfold.conformance.cache.prompts import (
    Prompt,
    caches_in_blocks,
    render,
    shared_segments,
    shared_tokens,
)
from reqfold.conformance.cache.provider_said import provider_said
from reqfold.conformance.cache.streams import (
    ALIKE,
    OpeningShape,
    continued,
    similarity,
)
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import Check
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo
from reqfold.fakes.profiles import Profile
from reqfold.fakes.tokenizer import SegmentEncoder

MEMO_BYTES = 16 * 1024 * 1024
"""Bound on the rendered tokens and messages remembered between requests."""

VOLATILE_CAUSES = frozenset({"date-time", "nonce"})
"""Causes that are per-request or per-session values in the opening (CACHE-2)."""


@dataclass(slots=True)
class _Stream:
    number: int
    shape: OpeningShape
    first_index: int
    last: Prompt
    last_process: str
    tool_names: tuple[str, ...]
    system_excerpt: str
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    lost_tokens: int = 0
    breaks: int = 0


@dataclass(slots=True)
class _Static:
    first: Prompt
    static_tokens: int
    starts: int = 1


@dataclass(slots=True)
class _State:
    streams: list[_Stream] = field(default_factory=list)
    static: dict[int, _Static] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    breaks: list[Break] = field(default_factory=list)
    echoes: list[EchoFinding] = field(default_factory=list)
    echo_checked: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    shapes: dict[tuple[tuple[str, ...], str], OpeningShape] = field(
        default_factory=dict
    )
    """The shapes of the last few openings (most requests repeat one)."""
    within: dict[int, int] = field(default_factory=dict)
    """Per stream: requests compared with one of the same process."""
    crossings: set[str] = field(default_factory=set)
    """`resume` and `fresh`, as seen between processes."""
    provider_said: dict[int, str] = field(default_factory=dict)
    """Per request index: what the provider's own cache diagnostics said."""
    begins_at: int | None = None
    """The index of the first capture line."""
    last_index: int | None = None
    missing: int = 0
    """Indices absent between lines (a capture cut in the middle)."""
    starts_told: bool = False
    """Process starts were given, or told by a change of API key."""


def judge_cache(
    calls: Iterable[CapturedCall],
    *,
    starts: Sequence[ProcessStart] = (),
    expected: Mapping[int, str] | None = None,
    fail_on: Collection[str] = (),
    max_lost_tokens: int | None = None,
    profile: Profile | None = None,
    starts_by_key: bool = False,
) -> CacheJudgement:
    """Judge the prompt-cache stability of a harness from its requests alone.

    Args:
        calls: the captured requests in arrival order
            (`capture.read_capture_lines` of a `requests.jsonl`, or
            `capture.calls_from_records` of the fake's own capture).
        starts: where each harness process started (first request index,
            name, kind `resume` or `fresh`); none: one process. They win
            per index over a capture line's own `process_start`, which
            starts a process elsewhere; a start without a name is named
            `process N` by its place.
        expected: request index -> why a break there is expected
            (a compaction, a model switch, a `/clear`).
        fail_on: causes that fail the verdict wherever they appear
            (a CI gate stricter than the spec).
        max_lost_tokens: fail when the unexpected breaks lose more tokens.
        profile: the fake profile the requests were served under (default:
            told from each request's path and usage).
        starts_by_key: with no `starts`, a request sent with another API key
            than the one before starts a process (a resumed one), as with
            `reqfold probe`'s fresh key per process. With no `starts`, a
            capture line's own `process_start` starts one too.
    """
    declared = dict(expected or {})
    pending = sorted(starts, key=lambda start: start.first_index)
    declared_firsts = {start.first_index for start in pending}
    ordered: list[ProcessStart] = []
    firsts: list[int] = []
    last_key: str | None = None
    encoder = SegmentEncoder(max_bytes=MEMO_BYTES)
    memo = MessagePrefixMemo(max_prompts=4, max_bytes=MEMO_BYTES)
    state = _State()
    for call in calls:
        _note_index(state, call.index)
        if call.status != 200:
            state.skipped.append((call.index, f"answered {call.status}"))
            continue
        prompt = render(
            call.index,
            call.path,
            call.body,
            encoder,
            memo,
            usage=call.usage,
            reply=call.reply,
            profile=profile,
        )
        if prompt is None:
            state.skipped.append((call.index, "not a request the fake renders"))
            continue
        if starts:
            # declared starts win per index; the capture's own marks elsewhere
            marked = call.process_start
            if marked is not None and call.index not in declared_firsts:
                bisect.insort(
                    pending,
                    ProcessStart(
                        first_index=call.index,
                        name=call.process_name or "",
                        kind=marked,
                    ),
                    key=lambda start: start.first_index,
                )
            while pending and pending[0].first_index <= call.index:
                start = pending.pop(0)
                told = call.process_name if start.first_index == call.index else None
                name = start.name or told or f"process {len(ordered) + 1}"
                ordered.append(
                    ProcessStart(
                        first_index=start.first_index, name=name, kind=start.kind
                    )
                )
                firsts.append(start.first_index)
        else:
            begins = call.process_start
            if begins is None and starts_by_key and call.key != last_key:
                begins = "resume"
            if not ordered or (begins is not None and last_key is not None):
                ordered.append(
                    ProcessStart(
                        first_index=call.index,
                        name=call.process_name or f"process {len(ordered) + 1}",
                        kind=begins if ordered and begins else "first",
                    )
                )
                firsts.append(call.index)
            last_key = call.key
        if call.expect_break is not None:
            declared.setdefault(call.index, call.expect_break)
        position = bisect.bisect_right(firsts, call.index) - 1
        process = ordered[position] if position >= 0 else None
        _judge_one(state, prompt, process, declared)
        if (said := provider_said(call.provider)) is not None:
            state.provider_said[call.index] = said
    state.starts_told = len(ordered) > 1 or bool(starts)
    return _finish(state, fail_on, max_lost_tokens)


def _note_index(state: _State, index: int) -> None:
    """Where the capture begins, and any index skipped between lines."""
    if state.begins_at is None:
        state.begins_at = index
    elif state.last_index is not None and index > state.last_index + 1:
        state.missing += index - state.last_index - 1
    state.last_index = index


def _judge_one(
    state: _State,
    prompt: Prompt,
    process: ProcessStart | None,
    declared: Mapping[int, str],
) -> None:
    name = process.name if process is not None else "process 1"
    kind = process.kind if process is not None else "first"
    shape = state.shapes.get((prompt.tool_names, prompt.system_text))
    if shape is None:
        shape = OpeningShape.of(prompt)
        if len(state.shapes) >= 16:
            state.shapes.clear()
        state.shapes[(prompt.tool_names, prompt.system_text)] = shape
    stream = _stream_for(state, shape, prompt)
    if stream is None:
        stream = _Stream(
            number=len(state.streams),
            shape=shape,
            first_index=prompt.index,
            last=prompt,
            last_process=name,
            tool_names=prompt.tool_names,
            system_excerpt=prompt.system_text[:80],
        )
        state.streams.append(stream)
        state.static[stream.number] = _Static(prompt, prompt.opening_tokens)
        relation: Relation = "first" if stream.number == 0 else "new-opening"
        _row(state, prompt, name, stream, relation, None, "", 0, expected=False)
        return
    previous = stream.last
    across = "within"
    if stream.last_process != name:
        across = "fresh" if kind == "fresh" else "resume"
        if stream is not _largest(state):
            # A side stream is judged within one process (STREAM-3): in a new
            # process it starts again.
            stream.last, stream.last_process = prompt, name
            _row(state, prompt, name, stream, "new-opening", None, "", 0, False)
            return
    if across != "within":
        state.crossings.add(across)
        _note_static(state.static[stream.number], prompt)
    if across == "within":
        state.within[stream.number] = state.within.get(stream.number, 0) + 1
    shared = shared_segments(previous, prompt)
    if previous.model != prompt.model:
        shared = 0  # another model is another cache partition
    stream.last, stream.last_process = prompt, name
    if across == "fresh":
        _judge_fresh(state, stream, previous, prompt, name, shared)
        return
    if shared >= len(previous.segments):
        relation = "repeat" if shared == len(prompt.segments) else "append"
        _row(state, prompt, name, stream, relation, previous.index, "", 0, False)
        _check_echo(state, stream, previous, prompt)
        return
    cause = classify(previous, prompt, shared, resumed=across == "resume")
    lost = max(
        0,
        _cacheable(previous, prompt, previous.n_tokens)
        - _cacheable(previous, prompt, _matched(previous, prompt)),
    )
    why = declared.get(prompt.index)
    if why is None and cause.name in EXPECTED_SHAPES:
        why = f"recognised: {cause.name}"
    if why is None and cause.name in BENIGN:
        why = f"benign: {cause.name}"
    _row(
        state,
        prompt,
        name,
        stream,
        "diverged",
        previous.index,
        cause.name,
        lost,
        why is not None,
    )
    state.breaks.append(
        _break(
            prompt,
            previous,
            name,
            stream,
            cause,
            lost,
            expected=why,
            across="within" if across == "within" else "resume",
        )
    )
    if why is None:
        stream.lost_tokens += lost
        stream.breaks += 1


def _judge_fresh(
    state: _State,
    stream: _Stream,
    previous: Prompt,
    prompt: Prompt,
    process: str,
    shared: int,
) -> None:
    """A fresh session: only its opening is owed to the previous session."""
    opening = min(previous.opening, len(previous.segments))
    if shared >= opening and prompt.opening == previous.opening:
        _row(state, prompt, process, stream, "fresh", previous.index, "", 0, False)
        return
    cause = classify(previous, prompt, shared)
    lost = max(
        0,
        _cacheable(previous, prompt, previous.opening_tokens)
        - _cacheable(
            previous, prompt, min(_matched(previous, prompt), previous.opening_tokens)
        ),
    )
    _row(
        state, prompt, process, stream, "fresh", previous.index, cause.name, lost, False
    )
    stream.lost_tokens += lost
    stream.breaks += 1
    state.breaks.append(
        _break(
            prompt,
            previous,
            process,
            stream,
            cause,
            lost,
            expected=None,
            across="fresh",
        )
    )


def _break(
    prompt: Prompt,
    previous: Prompt,
    process: str,
    stream: _Stream,
    cause: Cause,
    lost: int,
    *,
    expected: str | None,
    across: Literal["within", "resume", "fresh"],
) -> Break:
    """A break as found; its rules and stream name are given at the end."""
    return Break(
        index=prompt.index,
        previous=previous.index,
        process=process,
        stream=str(stream.number),
        cause=cause.name,
        detail=cause.detail,
        field=cause.field,
        earlier=cause.earlier,
        current=cause.current,
        lost=lost,
        expected=expected,
        rules=(),
        across=across,
    )


def _largest(state: _State) -> _Stream:
    """The main stream so far: the one holding the most prompt tokens."""
    return max(state.streams, key=lambda s: (s.prompt_tokens, -s.number))


def _cacheable(previous: Prompt, prompt: Prompt, matched: int) -> int:
    """What the fake caches of `prompt` when its first `matched` tokens are
    those of `previous`: the dialect's block rule, or, for Anthropic, the
    longest entry `previous` wrote (at its cache breakpoints) within them."""
    if caches_in_blocks(previous.profile):
        return prompt.cached_for(matched)
    ends = [
        previous.start_of(position + 1)
        for position, segment in enumerate(previous.segments)
        if segment.breakpoint is not None
    ]
    hit = max((end for end in ends if end <= matched), default=0)
    return hit if hit >= previous.profile.minimum_for(previous.model) else 0


def _matched(previous: Prompt, prompt: Prompt) -> int:
    """Leading tokens the fake's cache can match of `prompt` after `previous`."""
    if previous.model != prompt.model:
        return 0
    return shared_tokens(previous, prompt)


def _stream_for(state: _State, shape: OpeningShape, prompt: Prompt) -> _Stream | None:
    """The stream whose conversation `prompt` continues furthest (ties: the
    most alike opening), else the one with the most alike opening."""
    continuing = [
        (matched, similarity(stream.shape, shape), -stream.number, stream)
        for stream in state.streams
        if (matched := continued(stream.last, prompt))
    ]
    if continuing:
        *_, chosen = max(continuing, key=lambda item: item[:3])
        chosen.shape = shape
        return chosen
    best: _Stream | None = None
    best_score = ALIKE
    for stream in state.streams:
        score = similarity(stream.shape, shape)
        if score >= best_score and (best is None or score > best_score):
            best, best_score = stream, score
    if best is not None:
        best.shape = shape
    return best


def _note_static(static: _Static, prompt: Prompt) -> None:
    """A process start: how much of the first opening it still shares."""
    static.static_tokens = min(static.static_tokens, _matched(static.first, prompt))
    static.starts += 1


def _row(
    state: _State,
    prompt: Prompt,
    process: str,
    stream: _Stream,
    relation: Relation,
    previous: int | None,
    cause: str,
    lost: int,
    expected: bool,
) -> None:
    stream.requests += 1
    stream.prompt_tokens += prompt.n_tokens
    stream.cached_tokens += prompt.cached or 0
    state.rows.append(
        Row(
            index=prompt.index,
            process=process,
            stream=str(stream.number),
            prompt=prompt.n_tokens,
            cached=prompt.cached,
            written=prompt.written,
            lost=lost,
            relation=relation,
            previous=previous,
            cause=cause or ("new-opening" if relation == "new-opening" else ""),
            expected=expected,
        )
    )


def _check_echo(
    state: _State, stream: _Stream, previous: Prompt, prompt: Prompt
) -> None:
    difference = echo_difference(previous, prompt)
    if difference is NOT_APPLICABLE:
        return
    state.echo_checked += 1
    if isinstance(difference, tuple):
        state.echoes.append(
            EchoFinding(
                index=prompt.index,
                previous=previous.index,
                stream=str(stream.number),
                field=difference[0],
                returned=difference[1],
                echoed=difference[2],
            )
        )


# ---------------------------------------------------------------- the verdict


def _finish(
    state: _State, fail_on: Collection[str], max_lost_tokens: int | None
) -> CacheJudgement:
    total = sum(stream.prompt_tokens for stream in state.streams) or 1
    main = max(state.streams, key=lambda s: (s.prompt_tokens, -s.number), default=None)
    names: dict[str, str] = {}
    side = 0
    for stream in state.streams:
        if stream is main:
            names[str(stream.number)] = "main"
        else:
            side += 1
            names[str(stream.number)] = f"side {side}"
    main_id = str(main.number) if main is not None else ""
    rows = [_renamed(row, names) for row in state.rows]
    breaks = [
        _with_rules(item, names[item.stream], item.stream == main_id)
        for item in state.breaks
    ]
    echoes = [replace(item, stream=names[item.stream]) for item in state.echoes]
    streams = [
        StreamSummary(
            name=names[str(stream.number)],
            main=stream is main,
            requests=stream.requests,
            prompt_tokens=stream.prompt_tokens,
            share=stream.prompt_tokens / total,
            cached_tokens=stream.cached_tokens,
            lost_tokens=stream.lost_tokens,
            breaks=stream.breaks,
            first_index=stream.first_index,
            tool_names=stream.tool_names,
            system_excerpt=stream.system_excerpt,
        )
        for stream in sorted(state.streams, key=lambda s: s is not main)
    ]
    static = _static_opening(state.static[main.number]) if main is not None else None
    judgement = CacheJudgement(
        rows=rows,
        breaks=breaks,
        streams=streams,
        echoes=echoes,
        static=static,
        skipped=state.skipped,
        provider_said=state.provider_said,
        begins_at=state.begins_at,
        missing=state.missing,
    )
    main_number = main.number if main is not None else -1
    judgement.findings.extend(
        _findings(judgement, state, fail_on, max_lost_tokens, main_number)
    )
    return judgement


def _renamed(row: Row, names: Mapping[str, str]) -> Row:
    relation = row.relation
    if relation in ("first", "new-opening") and row.previous is None:
        # Told once the main stream is known: a side request sent first
        # (a title generator) does not make the main stream a side one.
        relation = "first" if names[row.stream] == "main" else "new-opening"
    return replace(
        row,
        stream=names[row.stream],
        relation=relation,
        cause="new-opening"
        if relation == "new-opening"
        else row.cause.replace("new-opening", ""),
    )


def _with_rules(item: Break, stream: str, main: bool) -> Break:
    if item.across == "fresh":
        rules: tuple[str, ...] = ("STREAM-2",)
    elif item.across == "resume":
        rules = ("CACHE-3",)
    else:
        rules = ("CACHE-1",) if main else ("STREAM-3",)
    if item.cause in VOLATILE_CAUSES and item.field.startswith(
        ("tools", "system", "messages[0]")
    ):
        rules += ("CACHE-2",)
    return replace(item, stream=stream, rules=rules)


def _static_opening(static: _Static) -> StaticOpening:
    first = static.first
    breakpoint_tokens: int | None = None
    if not caches_in_blocks(first.profile):
        breakpoint_tokens = 0
        for position, segment in enumerate(first.segments):
            end = first.start_of(position + 1)
            if end > static.static_tokens:
                break
            if segment.breakpoint is not None:
                breakpoint_tokens = end
    return StaticOpening(
        opening_tokens=first.opening_tokens,
        static_tokens=static.static_tokens,
        starts=static.starts,
        breakpoint_tokens=breakpoint_tokens,
    )


def _describe(items: Sequence[Break], limit: int = 3) -> str:
    shown = "; ".join(
        f"request {item.index} ({item.stream}): {item.cause}, {item.lost} tokens lost"
        for item in items[:limit]
    )
    more = f"; and {len(items) - limit} more" if len(items) > limit else ""
    return shown + more


def _resume_hint(broken: Sequence[Break], state: _State) -> str:
    """Where nothing in the capture told where a harness process started: how
    to declare one, since a resume judged as one process may look a break."""
    if state.starts_told:
        return ""
    first = broken[0].index
    return (
        f" (nothing in the capture tells where a process started: if request"
        f" {first} began a resumed process, --process-start {first}:resume"
        " declares it)"
    )


def _as_expected(breaks: Sequence[Break], rule: str) -> str:
    """`, or breaks as expected (N)` when N breaks under `rule` were expected,
    so a pass never claims every request extended when some did not."""
    expected = sum(1 for item in breaks if item.expected and rule in item.rules)
    return f", or breaks as expected ({expected})" if expected else ""


def _findings(
    judgement: CacheJudgement,
    state: _State,
    fail_on: Collection[str],
    max_lost_tokens: int | None,
    main_number: int,
) -> list[Check]:
    unexpected = [item for item in judgement.breaks if item.expected is None]

    def breaks_of(rule: str) -> list[Break]:
        return [item for item in unexpected if rule in item.rules]

    def warns_on_breaks(finding_id: str, rule: str, kept: str) -> Check:
        """A warning listing the unexpected breaks of `rule`; a pass that
        says `kept` where there are none."""
        broken = breaks_of(rule)
        return Check(
            part=PART,
            revision="",
            id=finding_id,
            rules=(rule,),
            outcome=Outcome.WARN if broken else Outcome.PASS,
            message=_describe(broken) if broken else kept,
        )

    findings: list[Check] = []
    main = next((s for s in judgement.streams if s.main), None)
    if main is not None:
        broken = breaks_of("CACHE-1")
        compared = state.within.get(main_number, 0)
        outcome = Outcome.FAIL if broken else Outcome.PASS
        message = (
            _describe(broken) + _resume_hint(broken, state)
            if broken
            else f"each of the {compared} request(s) of the main stream that"
            " followed another in the same process extends the previous one"
            + _as_expected(judgement.breaks, "CACHE-1")
        )
        if not compared:
            outcome = Outcome.SKIP
            message = "no two requests of the main stream came from one process"
        findings.append(
            Check(
                part=PART,
                revision="",
                id="cache/main-extends",
                rules=("CACHE-1",),
                outcome=outcome,
                message=message,
            )
        )
    sides = [s for s in judgement.streams if not s.main]
    if sides:
        findings.append(
            warns_on_breaks(
                "cache/side-streams-extend",
                "STREAM-3",
                f"{len(sides)} side stream(s); none broke within a process",
            )
        )
    if "resume" in state.crossings:
        findings.append(
            warns_on_breaks(
                "cache/resume-extends",
                "CACHE-3",
                "each resumed process extends the process before"
                + _as_expected(judgement.breaks, "CACHE-3"),
            )
        )
    if "fresh" in state.crossings:
        findings.append(
            warns_on_breaks(
                "cache/fresh-session-keeps-opening",
                "STREAM-2",
                "each fresh session keeps the previous session's opening",
            )
        )
    volatile = breaks_of("CACHE-2")
    if volatile:
        findings.append(
            Check(
                part=PART,
                revision="",
                id="cache/volatile-opening",
                rules=("CACHE-2",),
                outcome=Outcome.WARN,
                message=_describe(volatile),
            )
        )
    if state.echo_checked:
        findings.append(
            Check(
                part=PART,
                revision="",
                id="cache/echo-fidelity",
                rules=("STREAM-4",),
                outcome=Outcome.WARN if judgement.echoes else Outcome.PASS,
                message="; ".join(
                    f"request {echo.index}: {echo.field} re-sent as {echo.echoed!r},"
                    f" returned as {echo.returned!r}"
                    for echo in judgement.echoes[:3]
                )
                or f"{state.echo_checked} assistant turn(s) re-sent byte for byte",
            )
        )
    if fail_on:
        gated = [item for item in unexpected if item.cause in fail_on]
        findings.append(
            Check(
                part=PART,
                revision="",
                id="gate/fail-on",
                rules=tuple(sorted({r for item in gated for r in item.rules}))
                or ("CACHE-1",),
                detail={GATE: "fail-on"},
                outcome=Outcome.FAIL if gated else Outcome.PASS,
                message=_describe(gated)
                if gated
                else f"no break caused by {', '.join(sorted(fail_on))}",
            )
        )
    if max_lost_tokens is not None:
        lost = judgement.lost_tokens
        findings.append(
            Check(
                part=PART,
                revision="",
                id="gate/max-lost-tokens",
                rules=tuple(sorted({r for item in unexpected for r in item.rules}))
                or ("CACHE-1",),
                detail={GATE: "max-lost-tokens"},
                outcome=Outcome.FAIL if lost > max_lost_tokens else Outcome.PASS,
                message=f"{lost} tokens lost against a pure append"
                f" (at most {max_lost_tokens} allowed)",
            )
        )
    return findings
