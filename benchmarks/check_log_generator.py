"""A seeded generator of realistic, valid session logs for the checker benchmark.

The event mix follows the real logs described in the research notes: most
lines are ``assistant/chunk`` (streamed deltas of about one token, 1-8
characters, a reasoning block on half the steps), each step opens with
``step/start`` and, on the first step of a loop instance, a snapshot whose
header carries a multi-kilobyte system prompt and tens of tool schemas; a
few steps log a delta (a system line edit, a tool added at the end, a
config switch), a rare one a ``fallback`` (a tool reorder); tool calls and
results, injected context, an occasional compaction replace, plugin event
types the checker does not know, and a new instance (``resume``) now and then.

`write_harness_log` writes the other shape, that of the original harness's
real logs (issue 11): chunk-heavy (every reply streamed as about 20 small
``assistant/chunk`` events, three lines in four), wide headers (30 tools
with nested JSON Schemas), a tools or system delta every ~20 steps, and a
tool call with its result on most steps.

The log is written line by line, so memory stays flat at any size. Every log
it writes passes ``reqfold check`` (the benchmark asserts so).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import IO, Any

WORDS = (
    "the",
    "request",
    "header",
    "is",
    "folded",
    "from",
    "the",
    "log",
    "and",
    "every",
    "request",
    "rebuilds",
    "from",
    "its",
    "boundary",
    "so",
    "caches",
    "keep",
    "hitting",
    "while",
    "tools",
    "run",
    "and",
    "results",
    "stream",
    "back",
    "into",
    "the",
    "derived",
    "history",
    "one",
    "append",
    "at",
    "a",
    "time",
)


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _tool(rng: random.Random, index: int) -> dict[str, Any]:
    properties = {
        f"arg{k}": {
            "type": rng.choice(["string", "integer", "boolean"]),
            "description": _text(rng, 8),
        }
        for k in range(rng.randint(2, 6))
    }
    return {
        "name": f"tool_{index:02d}",
        "description": _text(rng, 30),
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": sorted(properties)[:1],
        },
    }


class _LogWriter:
    """Tracks seq and surface so every generated event is valid."""

    def __init__(self, out: IO[str], rng: random.Random) -> None:
        self.out = out
        self.rng = rng
        self.seq = 0
        self.time = 1_700_000_000_000
        self.surface: list[int] = []
        self.written = 0

    def emit(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        surface_op: Any = None,
        sources: list[int] | None = None,
    ) -> int:
        event: dict[str, Any] = {
            "type": kind,
            "seq": self.seq,
            "time": self.time,
            "data": data,
        }
        if sources:
            event["sourceEventSeqs"] = sources
        if surface_op is not None:
            event["surfaceOp"] = surface_op
            if surface_op == "append":
                self.surface.append(self.seq)
        line = _dump(event)
        self.out.write(line)
        self.written += len(line.encode("utf-8"))
        self.seq += 1
        self.time += self.rng.randint(0, 40)
        return self.seq - 1


def _tool_round(
    w: _LogWriter, turn: int, step: int, call_id: str, name: str, *, words: int
) -> None:
    """A ``tool/call`` and its ``tool/result`` of `words` words."""
    call = w.emit(
        "tool/call",
        {
            "turn": turn,
            "step": step,
            "callId": call_id,
            "name": name,
            "arguments": '{"arg0":"x"}',
        },
    )
    w.emit(
        "tool/result",
        {
            "turn": turn,
            "step": step,
            "callId": call_id,
            "content": [{"type": "text", "text": _text(w.rng, words)}],
            "isError": False,
        },
        surface_op="append",
        sources=[call],
    )


def _header(
    rng: random.Random, tools: list[dict[str, Any]], system: list[str], prefix: bool
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "config": {"model": "deepseek-chat", "temperature": 0.7},
        "system": "\n".join(system),
        "tools": tools,
    }
    if prefix:
        header["messagePrefix"] = [
            {"role": "user", "content": [{"type": "text", "text": _text(rng, 40)}]}
        ]
    return header


def _block(
    w: _LogWriter, turn: int, step: int, index: int, kind: str, text: str
) -> list[int]:
    rng = w.rng
    delta = "text-delta" if kind == "text" else "reasoning-delta"
    seqs = [
        w.emit(
            "assistant/chunk",
            {
                "turn": turn,
                "step": step,
                "chunk": {"type": "block-start", "index": index, "blockType": kind},
            },
        )
    ]
    position = 0
    while position < len(text):
        size = rng.randint(1, 8)  # about one token, as providers stream them
        piece = text[position : position + size]
        position += size
        seqs.append(
            w.emit(
                "assistant/chunk",
                {
                    "turn": turn,
                    "step": step,
                    "chunk": {"type": delta, "index": index, "text": piece},
                },
            )
        )
    seqs.append(
        w.emit(
            "assistant/chunk",
            {
                "turn": turn,
                "step": step,
                "chunk": {
                    "type": "block-end",
                    "index": index,
                    "block": {"type": kind, "text": text},
                },
            },
        )
    )
    return seqs


def write_log(out: IO[str], target_bytes: int, *, seed: int = 0) -> int:
    """Write a valid log of about `target_bytes` bytes; returns the event count."""
    rng = random.Random(seed)
    out.write(
        _dump(
            {
                "type": "session",
                "version": 0,
                "id": f"bench-{seed}",
                "createdAt": 1_700_000_000_000,
            }
        )
    )
    tools = [_tool(rng, i) for i in range(36)]
    system = [_text(rng, rng.randint(4, 16)) for _ in range(60)]
    w = _LogWriter(out, rng)
    turn = 0
    header: dict[str, Any] | None = None
    logged_this_instance = False
    next_tool = len(tools)
    while w.written < target_bytes:
        turn += 1
        if turn > 1 and rng.random() < 0.04:
            logged_this_instance = False  # a new loop instance (a resume)
        w.emit(
            "turn/start",
            {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}},
        )
        w.emit(
            "user/message",
            {
                "content": [{"type": "text", "text": _text(rng, 20)}],
                "source": {"kind": "user"},
            },
            surface_op="append",
        )
        if len(w.surface) > 40 and rng.random() < 0.3:
            start_seq = w.emit("compact/start", {"turn": turn})
            shadowed = w.surface[:-4]
            summary = w.emit(
                "compact/summary", {"summary": _text(rng, 60), "shadowedSeqs": shadowed}
            )
            op = {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}
            w.emit(
                "user/message",
                {
                    "content": [{"type": "text", "text": _text(rng, 60)}],
                    "source": {"kind": "plugin", "plugin": "compact"},
                },
                surface_op=op,
                sources=[start_seq, summary, *shadowed],
            )
            w.surface[: len(shadowed)] = [w.seq - 1]
            w.emit("compact/end", {"turn": turn})
        for step in range(1, rng.randint(1, 4) + 1):
            w.emit("step/start", {"turn": turn, "step": step})
            if not logged_this_instance:
                reason = "initial" if header is None else "resume"
                header = _header(rng, tools, system, prefix=True)
                w.emit("request/header", {"header": header, "reason": reason})
                logged_this_instance = True
            elif rng.random() < 0.003 and header is not None:
                choice = rng.random()
                if choice < 0.4:
                    line = rng.randrange(len(system))
                    system[line] = f"{_text(rng, 9)} (revised at turn {turn})"
                    header["system"] = "\n".join(system)
                    w.emit(
                        "request/header-delta",
                        {
                            "system": {
                                "keepStart": line,
                                "keepEnd": len(system) - line - 1,
                                "insert": [system[line]],
                            }
                        },
                    )
                elif choice < 0.7:
                    tool = _tool(rng, next_tool)
                    next_tool += 1
                    tools.append(tool)
                    w.emit(
                        "request/header-delta",
                        {"tools": {"added": [tool], "removed": [], "changed": []}},
                    )
                elif choice < 0.9:
                    config = {
                        "model": "deepseek-chat",
                        "temperature": round(rng.random(), 2),
                    }
                    header["config"] = config
                    w.emit("request/header-delta", {"config": config})
                else:
                    tools[0], tools[1] = tools[1], tools[0]
                    w.emit("request/header", {"header": header, "reason": "fallback"})
            text = _text(rng, rng.randint(20, 150))
            sources: list[int] = []
            content: list[dict[str, Any]] = []
            if rng.random() < 0.5:
                reasoning = _text(rng, rng.randint(30, 200))
                sources += _block(w, turn, step, 0, "reasoning", reasoning)
                content.append({"type": "reasoning", "text": reasoning})
            sources += _block(w, turn, step, len(content), "text", text)
            calls = step < 3 and rng.random() < 0.6
            content.append({"type": "text", "text": text})
            call_id = f"call_{turn}_{step}"
            if calls:
                content.append(
                    {
                        "type": "tool-call",
                        "id": call_id,
                        "name": tools[0]["name"],
                        "arguments": '{"arg0":"x"}',
                    }
                )
            usage = {"inputTokens": rng.randint(100, 9000), "outputTokens": 50}
            sources.append(
                w.emit(
                    "assistant/chunk",
                    {
                        "turn": turn,
                        "step": step,
                        "chunk": {"type": "usage", "usage": usage},
                    },
                )
            )
            sources.append(
                w.emit(
                    "assistant/chunk",
                    {
                        "turn": turn,
                        "step": step,
                        "chunk": {"type": "finish", "reason": {"kind": "stop"}},
                    },
                )
            )
            w.emit(
                "assistant/message",
                {"turn": turn, "step": step, "content": content, "usage": usage},
                surface_op="append",
                sources=sources,
            )
            if calls:
                _tool_round(w, turn, step, call_id, tools[0]["name"], words=80)
                if rng.random() < 0.2:
                    w.emit("approval/policy", {"mode": "never"})
            w.emit("step/end", {"turn": turn, "step": step})
        w.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return w.seq


def _schema(rng: random.Random, depth: int) -> dict[str, Any]:
    """A JSON Schema of nested objects, arrays and enums, like real tools'."""
    kind = rng.choice(["string", "integer", "boolean", "array", "object", "enum"])
    if depth <= 0 or kind in ("string", "integer", "boolean"):
        return {
            "type": kind if kind in ("integer", "boolean") else "string",
            "description": _text(rng, 6),
        }
    if kind == "enum":
        return {
            "type": "string",
            "enum": [rng.choice(WORDS) for _ in range(4)],
            "description": _text(rng, 5),
        }
    if kind == "array":
        return {
            "type": "array",
            "items": _schema(rng, depth - 1),
            "description": _text(rng, 5),
        }
    properties = {
        f"field{k}": _schema(rng, depth - 1) for k in range(rng.randint(2, 4))
    }
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties)[:2],
        "additionalProperties": False,
    }


def _wide_tool(rng: random.Random, index: int, version: int = 0) -> dict[str, Any]:
    properties = {f"arg{k}": _schema(rng, 2) for k in range(rng.randint(3, 6))}
    return {
        "name": f"harness_tool_{index:02d}",
        "description": f"{_text(rng, 40)} (v{version})",
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": sorted(properties)[:2],
            "additionalProperties": False,
        },
    }


def _streamed(w: _LogWriter, turn: int, step: int, text: str) -> list[int]:
    """One text block streamed as block-start, deltas, block-end, usage, finish:
    about 20 chunk lines for a reply of about 90 characters."""
    rng = w.rng
    seqs = [
        w.emit(
            "assistant/chunk",
            {
                "turn": turn,
                "step": step,
                "chunk": {"type": "block-start", "index": 0, "blockType": "text"},
            },
        )
    ]
    position = 0
    while position < len(text):
        size = rng.randint(3, 7)
        seqs.append(
            w.emit(
                "assistant/chunk",
                {
                    "turn": turn,
                    "step": step,
                    "chunk": {
                        "type": "text-delta",
                        "index": 0,
                        "text": text[position : position + size],
                    },
                },
            )
        )
        position += size
    seqs.append(
        w.emit(
            "assistant/chunk",
            {
                "turn": turn,
                "step": step,
                "chunk": {
                    "type": "block-end",
                    "index": 0,
                    "block": {"type": "text", "text": text},
                },
            },
        )
    )
    return seqs


def write_harness_log(
    out: IO[str], target_bytes: int, *, seed: int = 0, declared: bool = True
) -> int:
    """Write a valid log of the real harness shape (see the module docstring)
    of about `target_bytes` bytes; returns the event count. Its snapshots
    carry a session prefix; the storage line names its revision
    (``session-prefix``) unless `declared` is False, as the original
    harness's logs never do (then ``reqfold check`` infers it)."""
    rng = random.Random(seed)
    storage: dict[str, Any] = {
        "type": "session",
        "version": 0,
        "id": f"bench-harness-{seed}",
        "createdAt": 1_700_000_000_000,
    }
    if declared:
        storage["revision"] = "session-prefix"
    out.write(_dump(storage))
    tools = [_wide_tool(rng, i) for i in range(30)]
    system = [_text(rng, rng.randint(4, 16)) for _ in range(80)]
    prefix = [{"role": "user", "content": [{"type": "text", "text": _text(rng, 60)}]}]
    w = _LogWriter(out, rng)
    turn = 0
    started = False
    steps_to_change = rng.randint(15, 25)
    while w.written < target_bytes:
        turn += 1
        resume = started and rng.random() < 0.01  # a new loop instance
        w.emit(
            "turn/start",
            {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}},
        )
        w.emit(
            "user/message",
            {
                "content": [{"type": "text", "text": _text(rng, 12)}],
                "source": {"kind": "user"},
            },
            surface_op="append",
        )
        steps = rng.choice([1, 2, 2, 3, 3, 4])
        for step in range(1, steps + 1):
            w.emit("step/start", {"turn": turn, "step": step})
            steps_to_change -= 1
            if not started or (resume and step == 1):
                header = {
                    "config": {"model": "deepseek-chat", "temperature": 0.2},
                    "system": "\n".join(system),
                    "tools": tools,
                    "messagePrefix": prefix,
                }
                reason = "resume" if started else "initial"
                w.emit("request/header", {"header": header, "reason": reason})
                started = True
            elif steps_to_change <= 0:
                steps_to_change = rng.randint(15, 25)
                if rng.random() < 0.5:
                    line = rng.randrange(len(system))
                    system[line] = f"{_text(rng, 9)} (revised at turn {turn})"
                    arm: dict[str, Any] = {
                        "keepStart": line,
                        "keepEnd": len(system) - line - 1,
                        "insert": [system[line]],
                    }
                    w.emit("request/header-delta", {"system": arm})
                else:
                    index = rng.randrange(len(tools))
                    tools = list(tools)
                    tools[index] = _wide_tool(rng, index, version=turn)
                    w.emit(
                        "request/header-delta",
                        {
                            "tools": {
                                "added": [],
                                "removed": [],
                                "changed": [tools[index]],
                            }
                        },
                    )
            last = step == steps
            text = _text(rng, rng.randint(12, 22))
            sources = _streamed(w, turn, step, text)
            usage = {"inputTokens": rng.randint(1000, 90000), "outputTokens": 40}
            for chunk in (
                {"type": "usage", "usage": usage},
                {"type": "finish", "reason": {"kind": "stop"}},
            ):
                sources.append(
                    w.emit(
                        "assistant/chunk",
                        {"turn": turn, "step": step, "chunk": chunk},
                    )
                )
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            call_id = f"call_{turn}_{step}"
            name = tools[rng.randrange(len(tools))]["name"]
            if not last:
                content.append(
                    {
                        "type": "tool-call",
                        "id": call_id,
                        "name": name,
                        "arguments": '{"arg0":"x"}',
                    }
                )
            w.emit(
                "assistant/message",
                {"turn": turn, "step": step, "content": content, "usage": usage},
                surface_op="append",
                sources=sources,
            )
            if not last:
                _tool_round(w, turn, step, call_id, name, words=10)
            w.emit("step/end", {"turn": turn, "step": step})
        w.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return w.seq


def write_undeclared_log(out: IO[str], target_bytes: int, *, seed: int = 0) -> int:
    """The harness shape with no revision on its storage line (issue 31)."""
    return write_harness_log(out, target_bytes, seed=seed, declared=False)


SHAPES = {
    "mixed": write_log,
    "harness": write_harness_log,
    "undeclared": write_undeclared_log,
}
"""The benchmark's log shapes by name."""


def iter_lines(target_bytes: int, *, seed: int = 0) -> Iterator[str]:
    """The lines of a generated log (for small in-memory logs)."""
    import io

    buffer = io.StringIO()
    write_log(buffer, target_bytes, seed=seed)
    yield from buffer.getvalue().splitlines(keepends=True)
