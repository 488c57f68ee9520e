"""The cache judgement: prompt-cache stability judged from requests alone.

For any harness, whatever log it writes (or none): the requests it sent, as
the fake captured them, and where its processes started, give a verdict on
the cache half of the contract (docs/spec.md, sections 13 and 16; the
guide is docs/cache.md). Pure: plain data in, plain data out.

How to call it::

    from reqfold.conformance.cache import (
        ProcessStart, judge_cache, read_capture_lines,
    )

    with open("requests.jsonl", "rb") as capture:
        judgement = judge_cache(
            read_capture_lines(capture),           # or calls_from_records(fake.capture)
            starts=[ProcessStart(first_index=0, name="run 1", kind="first"),
                    ProcessStart(first_index=7, name="run 2", kind="resume")],
            expected={12: "compaction forced by the driver"},
            fail_on=("date-time",),                 # optional CI gate
            max_lost_tokens=None,                   # optional CI gate
        )
    judgement.findings   # checks: id, rules, outcome (pass/warn/fail), message
    judgement.breaks     # per break: index, stream, cause, excerpts, tokens lost,
                         # expected (why) or None, rules
    judgement.rows       # the timeline: prompt, cached, written, lost, relation, cause
    judgement.streams    # main and side streams with their share of prompt tokens
    judgement.static     # the static opening kept across process starts
    judgement.echoes     # assistant turns not re-sent byte for byte
    judgement.truncated  # the capture begins after index 0 (begins_at) or has gaps
    cache_status(judgement, strict=False)   # 0 conformant, 1 broken, 3 none judged

`render_text(judgement)` prints the timeline, the breaks, the findings and
the verdict (`cache_verdict`: the words every command uses);
`judgement_json(judgement)` is the JSON form (docs/cache.md).

The names are imported on first use (`_EXPORTS`): the judgement imports the
fake's prompt rendering, and a command that only declares the judgement's
options (`reqfold check LOG`, through `options` and `cause_names`) must not
pay for it at start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy sees every name; at run time they come lazily
    from reqfold.conformance.cache.capture import (
        CapturedCall,
        CaptureLineError,
        calls_from_records,
        read_capture_lines,
    )
    from reqfold.conformance.cache.cause_names import CAUSES
    from reqfold.conformance.cache.judge import judge_cache
    from reqfold.conformance.cache.model import (
        Break,
        CacheJudgement,
        EchoFinding,
        ProcessStart,
        Row,
        StaticOpening,
        StreamSummary,
    )
    from reqfold.conformance.cache.output import (
        cache_status,
        judgement_json,
        render_text,
    )

_EXPORTS = {
    "CAUSES": "cause_names",
    "Break": "model",
    "CacheJudgement": "model",
    "CaptureLineError": "capture",
    "CapturedCall": "capture",
    "EchoFinding": "model",
    "ProcessStart": "model",
    "Row": "model",
    "StaticOpening": "model",
    "StreamSummary": "model",
    "cache_status": "output",
    "calls_from_records": "capture",
    "judge_cache": "judge",
    "judgement_json": "output",
    "read_capture_lines": "capture",
    "render_text": "output",
}
"""Each exported name and the module of this package that holds it."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """An exported name, its module imported when first asked for."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(
                f"module 'reqfold.conformance.cache' has no attribute {name!r}"
            )
        return getattr(import_module(f"reqfold.conformance.cache.{module}"), name)

    def __dir__() -> list[str]:
        return sorted({*globals(), *_EXPORTS})


__all__ = [
    "CAUSES",
    "Break",
    "CacheJudgement",
    "CaptureLineError",
    "CapturedCall",
    "EchoFinding",
    "ProcessStart",
    "Row",
    "StaticOpening",
    "StreamSummary",
    "cache_status",
    "calls_from_records",
    "judge_cache",
    "judgement_json",
    "read_capture_lines",
    "render_text",
]
