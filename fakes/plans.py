"""Response plans for scripted replies: how a JSON or SSE answer is sent.

Pure functions from a rendered answer and its `Reply` (delay, gate,
keep-alives, cut) to the `ResponsePlan` the shells play back.
"""

from __future__ import annotations

from reqfold.fakes.gate import Gate
from reqfold.fakes.http import SSE_HEADERS, ResponsePlan, json_headers
from reqfold.fakes.jsontypes import JsonObject, dumps_compact
from reqfold.fakes.script import Reply


def stream_plan(
    frames: list[bytes], reply: Reply, keepalive: bytes, hold: Gate | None
) -> ResponsePlan:
    """SSE frames after `reply.keepalives` keep-alives, cut after
    `reply.cut_after` frames if scripted."""
    cut = reply.cut_after is not None and reply.cut_after < len(frames)
    if reply.cut_after is not None:
        frames = frames[: reply.cut_after]
    chunks = [keepalive] * reply.keepalives + frames
    return ResponsePlan(
        status=200,
        headers=SSE_HEADERS,
        chunks=tuple(chunks),
        streaming=True,
        delay=reply.delay,
        hold=hold,
        cut=cut,
    )


def json_plan(body: JsonObject, reply: Reply, hold: Gate | None) -> ResponsePlan:
    """A JSON answer; a scripted cut sends half the body, then drops."""
    raw = dumps_compact(body).encode("utf-8")
    headers = json_headers(len(raw))
    cut = reply.cut_after is not None
    if cut:
        raw = raw[: len(raw) // 2]
    return ResponsePlan(
        status=200,
        headers=headers,
        chunks=(raw,),
        delay=reply.delay,
        hold=hold,
        cut=cut,
    )


def error_plan(
    status: int, body: JsonObject, headers: tuple[tuple[str, str], ...] = ()
) -> ResponsePlan:
    """An error body, sent at once."""
    raw = dumps_compact(body).encode("utf-8")
    return ResponsePlan(
        status=status, headers=json_headers(len(raw), *headers), chunks=(raw,)
    )
